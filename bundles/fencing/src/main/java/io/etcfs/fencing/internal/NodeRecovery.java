package io.etcfs.fencing.internal;

import io.etcfs.spi.fencing.DeadNode;
import io.etcfs.spi.fencing.FenceAgent;
import io.etcfs.spi.fencing.Membership;
import io.etcfs.spi.fencing.RecoveryParticipant;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.metrics.MetricSource;
import io.etcfs.spi.metrics.Metrics;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.FieldOption;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;

/**
 * Looks for dead incarnations every few seconds and, elected through etcd, recovers them
 * ({@link Recovery}). Every live node runs one; at most one recovers a given incarnation at a
 * time. Shares the fencing configuration with {@link NodeMembership}.
 */
@Component(
    immediate = true,
    configurationPid = NodeMembership.PID,
    configurationPolicy = ConfigurationPolicy.REQUIRE,
    service = MetricSource.class)
public final class NodeRecovery implements MetricSource {
  private static final Logger LOG = System.getLogger(NodeRecovery.class.getName());
  /** Guards against a fence agent that ignores its own timeout. */
  private static final Duration AGENT_SLACK = Duration.ofSeconds(5);

  private final Membership membership;
  private final FenceAgent agent;
  private final HeartbeatDevice device;
  private final Recovery recovery;
  private final ScheduledExecutorService scanner;

  @Reference(
      service = RecoveryParticipant.class,
      cardinality = ReferenceCardinality.MULTIPLE,
      policy = ReferencePolicy.DYNAMIC,
      fieldOption = FieldOption.UPDATE)
  private final List<RecoveryParticipant> participants = new CopyOnWriteArrayList<>();

  @Activate
  public NodeRecovery(
      @Reference(name = "metaStore") MetaStore store,
      @Reference(name = "membership") Membership membership,
      @Reference(name = "fenceAgent", target = "(" + FenceAgent.NAME + "=none)") FenceAgent agent,
      NodeMembership.Config config) {
    this.membership = membership;
    this.agent = agent;
    String fsName = Names.check(NodeMembership.PID + ": fsName", config.fsName());
    Set<String> required = Arrays.stream(config.requiredParticipants().split(","))
        .map(String::trim).filter(s -> !s.isEmpty()).collect(Collectors.toCollection(TreeSet::new));
    Recovery.Timing timing = new Recovery.Timing(
        Duration.ofSeconds(NodeMembership.positive("fenceTimeoutSeconds",
            config.fenceTimeoutSeconds())),
        AGENT_SLACK,
        Duration.ofMillis(NodeMembership.positive("heartbeatMillis", config.heartbeatMillis())),
        Duration.ofMillis(NodeMembership.positive("heartbeatTimeoutMillis",
            config.heartbeatTimeoutMillis())),
        Duration.ofSeconds(NodeMembership.positive("heartbeatGiveUpSeconds",
            config.heartbeatGiveUpSeconds())),
        Duration.ofSeconds(Math.max(0, config.graceSeconds())));
    this.device = NodeMembership.openHeartbeat(Path.of(config.device()));
    this.recovery = new Recovery(store, new FencingKeys(fsName), membership, agent, device,
        () -> List.copyOf(participants), required, timing);
    this.scanner = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "etcfs-recovery-" + membership.nodeName());
      t.setDaemon(true);
      return t;
    });
    long every = TimeUnit.SECONDS.toMillis(NodeMembership.positive("scanSeconds",
        config.scanSeconds()));
    scanner.scheduleWithFixedDelay(this::scan, ThreadLocalRandom.current().nextLong(every),
        every, TimeUnit.MILLISECONDS);
  }

  @Deactivate
  void deactivate() {
    recovery.stop();
    scanner.shutdownNow();
    try {
      scanner.awaitTermination(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try {
      device.close();
    } catch (IOException e) {
      LOG.log(Level.WARNING, "closing heartbeat device: {0}", e.getMessage());
    }
  }

  private void scan() {
    try {
      if (!membership.isFenced()) {
        recovery.scanOnce();
      }
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "looking for dead nodes failed: {0}", e.toString());
    }
  }

  /** Metrics: this node's lease, and what its recovery scans saw and did. */
  @Override
  public void collect(Metrics out) {
    if (membership instanceof NodeMembership m) {
      new LeaseMetrics(m::leaseState).collect(out);
    }
    recovery.metrics.collect(out);
  }

  /** For tests and the shell: recover what is dead now, on this thread. */
  List<DeadNode> scanNow() {
    return recovery.scanOnce();
  }
}

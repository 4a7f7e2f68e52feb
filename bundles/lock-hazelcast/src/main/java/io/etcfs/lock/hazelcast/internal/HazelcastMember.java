package io.etcfs.lock.hazelcast.internal;

import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.NetworkConfig;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.function.Consumer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import com.hazelcast.config.DiscoveryStrategyConfig;
import com.hazelcast.config.InMemoryFormat;
import com.hazelcast.config.MapConfig;
import com.hazelcast.spi.discovery.DiscoveryStrategyFactory;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The Hazelcast member this node embeds. It starts on a thread of its own because a member takes
 * 1.3–9 s to join (several members starting at once are the slow case) and starting it inside
 * {@code activate} would hold up the framework's start of every later bundle.
 */
final class HazelcastMember {
  private static final Logger LOG = System.getLogger(HazelcastMember.class.getName());

  private final String description;
  private final CompletableFuture<HazelcastInstance> started = new CompletableFuture<>();
  private final CompletableFuture<Void> stopped = new CompletableFuture<>();
  private volatile HazelcastInstance instance;
  private volatile boolean stopping;
  /** A member silent this long is removed from the cluster (Hazelcast's default: 60). */
  static final int NO_HEARTBEAT_SECONDS = 5;
  /** How long one attempt to join may take before the member starts again. */
  static final int JOIN_SECONDS = 6;

  private HazelcastMember(String description) {
    this.description = description;
  }

  /**
   * Starts a member with {@code config} in the background and returns at once; {@code joined}
   * runs on that thread once the member is in its cluster, before {@link #started} completes.
   */
  static HazelcastMember start(Config config, Duration tryFor,
      Consumer<HazelcastInstance> joined) {
    HazelcastMember member = new HazelcastMember(describe(config));
    long until = System.nanoTime() + tryFor.toNanos();
    Thread starter = new Thread(() -> member.run(config, until, joined), "etcfs-hazelcast-start");
    starter.setDaemon(true);
    starter.start();
    return member;
  }

  /**
   * The member configuration: cluster {@code etcfs-<fsName>} so two filesystems on one network
   * never merge; members found through etcd ({@code discovery}: no multicast, no list kept by
   * hand); exactly the given address and port, since that is what the others are told.
   *
   * <p>Failure detection is set down from Hazelcast's minute to seconds. None of it is on the
   * safety path — a lock is free for others only when its session's entry has expired, and the
   * core's inode fence rejects a lost holder's commits whatever Hazelcast believes — so these
   * bound only how long operations on the partitions a dead member owned wait for their backups
   * to take over: a member silent for {@value #NO_HEARTBEAT_SECONDS} s is removed.
   */
  static Config config(String fsName, String nodeName, String host, int port,
      DiscoveryStrategyFactory discovery) {
    Config config = new Config();
    config.setClusterName("etcfs-" + fsName);
    config.setInstanceName("etcfs-" + fsName + "-" + nodeName);
    config.getMemberAttributeConfig().setAttribute("etcfs.node", nodeName);
    // The component's deactivate ends the member; a JVM hook of Hazelcast's own would race it.
    config.setProperty("hazelcast.shutdownhook.enabled", "false");
    config.setProperty("hazelcast.phone.home.enabled", "false");
    config.setProperty("hazelcast.logging.type", "jdk");
    config.setProperty("hazelcast.discovery.enabled", "true");
    config.setProperty("hazelcast.local.localAddress", host);
    config.setProperty("hazelcast.socket.bind.any", "false");
    config.setProperty("hazelcast.heartbeat.interval.seconds", "1");
    config.setProperty("hazelcast.max.no.heartbeat.seconds", Integer.toString(NO_HEARTBEAT_SECONDS));
    // Members starting together settle on one master within a second; the default waits 5 s.
    config.setProperty("hazelcast.wait.seconds.before.join", "1");
    // A member with no cluster yet claims mastership only once every address discovery gave it
    // answers; a frozen node's member (its kernel still accepts connections) never does, and
    // the claim is asked again until this runs out (Hazelcast's default: 300 s). The join then
    // fails and run() starts again on the addresses etcd lists by then, where a frozen node's
    // registration has lapsed with its lease.
    config.setProperty("hazelcast.max.join.seconds", Integer.toString(JOIN_SECONDS));
    // A member's graceful shutdown waits for the master to move its partitions away, which a
    // frozen member holds up until it is removed; a member still not done after this ends as a
    // crash would, and backups (one per partition) take over. A backend retired by a switch has
    // nothing left to keep, and the core has released every lock before the member stops.
    config.setProperty("hazelcast.graceful.shutdown.max.wait", "3");
    // Two clusters formed by a partition (or a start race) look for each other every 5 s.
    config.setProperty("hazelcast.merge.first.run.delay.seconds", "5");
    config.setProperty("hazelcast.merge.next.run.delay.seconds", "5");
    // Fewer partitions than the default 271: a lock map is small, and a member that leaves
    // hands over fewer of them.
    config.setProperty("hazelcast.partition.count", "71");
    NetworkConfig network = config.getNetworkConfig();
    network.setPort(port).setPortAutoIncrement(false);
    network.getInterfaces().setEnabled(true).addInterface(host);
    JoinConfig join = network.getJoin();
    join.getMulticastConfig().setEnabled(false);
    join.getAutoDetectionConfig().setEnabled(false);
    join.getTcpIpConfig().setEnabled(false);
    join.getDiscoveryConfig().addDiscoveryStrategyConfig(new DiscoveryStrategyConfig(discovery));
    // The queues live in the map as objects (no serialisation per entry processor); the
    // sessions map is small and read by key.
    config.addMapConfig(new MapConfig(HazelcastLockService.LOCKS)
        .setInMemoryFormat(InMemoryFormat.OBJECT).setBackupCount(1));
    config.addMapConfig(new MapConfig(HazelcastLockService.SESSIONS).setBackupCount(1));
    return config;
  }

  /** A port free on {@code host} now (a member started right after binds it). */
  static int freePort(String host) {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(host))) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new IllegalArgumentException(HazelcastLockService.PID + ": cannot bind a port on '"
          + host + "': " + e.getMessage());
    }
  }

  /** Completes with the running member, or exceptionally if it failed to start. */
  CompletionStage<HazelcastInstance> started() {
    return started.copy();
  }

  /**
   * Ends the member, waiting at most {@code wait} for it. A member still starting is shut down
   * as soon as its start finishes; the wait bounds how long a bundle stop can take.
   */
  void stop(Duration wait) {
    stopping = true;
    started.whenComplete((instance, failure) -> shutDown(instance));
    try {
      stopped.get(wait.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      LOG.log(Level.WARNING, "{0} did not stop within {1}", description, wait);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException e) {
      throw new IllegalStateException("cannot happen: stopped never fails", e);
    }
  }

  /**
   * Starts the member, again while {@code until} has not passed if an attempt cannot join (see
   * {@link #JOIN_SECONDS}) — unless the member was stopped meanwhile.
   */
  private void run(Config config, long until, Consumer<HazelcastInstance> joined) {
    Thread self = Thread.currentThread();
    // Hazelcast finds its services through the context loader; give it one that sees both its
    // own bundle (through our imports) and ours, rather than whatever the framework left there.
    self.setContextClassLoader(HazelcastMember.class.getClassLoader());
    config.setClassLoader(HazelcastMember.class.getClassLoader());
    try {
      HazelcastInstance instance;
      while (true) {
        try {
          instance = Hazelcast.newHazelcastInstance(config);
          break;
        } catch (IllegalStateException e) {
          if (stopping || System.nanoTime() - until >= 0) {
            throw e;
          }
          LOG.log(Level.WARNING, "{0} could not join within {1} s ({2}); starting again on the"
              + " addresses registered now", description, JOIN_SECONDS, e.getMessage());
        }
      }
      this.instance = instance;
      LOG.log(Level.INFO, "{0} started, {1} member(s)", description,
          instance.getCluster().getMembers().size());
      joined.accept(instance);
      started.complete(instance);
    } catch (RuntimeException | Error e) {
      HazelcastInstance i = instance;
      if (i != null) {
        i.shutdown();
      }
      LOG.log(Level.ERROR, "{0} failed to start: {1}", description, e.toString());
      started.completeExceptionally(e);
    }
  }

  /** Ends the member at once, without telling the others (a crash, for tests). */
  void terminate() {
    HazelcastInstance i = instance;
    if (i != null) {
      i.getLifecycleService().terminate();
    }
    stopped.complete(null);
  }

  private void shutDown(HazelcastInstance instance) {
    try {
      if (instance != null) {
        instance.shutdown();
        LOG.log(Level.INFO, "{0} stopped", description);
      }
    } finally {
      stopped.complete(null);
    }
  }

  private static String describe(Config config) {
    return "Hazelcast member "
        + config.getInstanceName()
        + " (cluster "
        + config.getClusterName()
        + ", port "
        + config.getNetworkConfig().getPort()
        + ")";
  }

  @Override
  public String toString() {
    return description;
  }
}

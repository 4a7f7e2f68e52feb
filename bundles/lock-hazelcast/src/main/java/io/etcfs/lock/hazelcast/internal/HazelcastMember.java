package io.etcfs.lock.hazelcast.internal;

import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.NetworkConfig;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.List;
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

  private HazelcastMember(String description) {
    this.description = description;
  }

  /** Starts a member with {@code config} in the background and returns at once. */
  static HazelcastMember start(Config config) {
    HazelcastMember member = new HazelcastMember(describe(config));
    Thread starter = new Thread(() -> member.run(config), "etcfs-hazelcast-start");
    starter.setDaemon(true);
    starter.start();
    return member;
  }

  /**
   * The member configuration: cluster {@code etcfs-<fsName>} so two filesystems on one network
   * never merge, TCP-IP join only (multicast would find members of other clusters and is often
   * filtered anyway), and exactly the configured port, since the members list names it.
   */
  static Config config(String fsName, String nodeName, List<String> members, int port) {
    Config config = new Config();
    config.setClusterName("etcfs-" + fsName);
    config.setInstanceName("etcfs-" + fsName + "-" + nodeName);
    config.getMemberAttributeConfig().setAttribute("etcfs.node", nodeName);
    // The component's deactivate ends the member; a JVM hook of Hazelcast's own would race it.
    config.setProperty("hazelcast.shutdownhook.enabled", "false");
    config.setProperty("hazelcast.phone.home.enabled", "false");
    config.setProperty("hazelcast.logging.type", "jdk");
    NetworkConfig network = config.getNetworkConfig();
    network.setPort(port).setPortAutoIncrement(false);
    JoinConfig join = network.getJoin();
    join.getMulticastConfig().setEnabled(false);
    join.getAutoDetectionConfig().setEnabled(false);
    join.getTcpIpConfig().setEnabled(true).setMembers(members);
    return config;
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

  private void run(Config config) {
    Thread self = Thread.currentThread();
    // Hazelcast finds its services through the context loader; give it one that sees both its
    // own bundle (through our imports) and ours, rather than whatever the framework left there.
    self.setContextClassLoader(HazelcastMember.class.getClassLoader());
    config.setClassLoader(HazelcastMember.class.getClassLoader());
    try {
      HazelcastInstance instance = Hazelcast.newHazelcastInstance(config);
      LOG.log(Level.INFO, "{0} started", description);
      started.complete(instance);
    } catch (RuntimeException | Error e) {
      LOG.log(Level.ERROR, "{0} failed to start: {1}", description, e.toString());
      started.completeExceptionally(e);
    }
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

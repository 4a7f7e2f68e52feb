package io.etcfs.launcher.cli;

import io.etcfs.etcd.client.EtcdMetaStore;
import io.etcfs.launcher.experiment.Cluster;
import io.etcfs.launcher.experiment.Strategy;
import io.etcfs.launcher.node.EtcdConnection;
import io.etcfs.spi.fs.FsRecord;
import io.etcfs.spi.fs.Keyspace;
import io.etcfs.support.switches.SwitchRequests;
import java.net.InetAddress;
import java.time.Duration;
import java.util.Properties;

/**
 * The experiment's live switches: asked through {@link SwitchRequests} exactly as {@code etcfs
 * switch} asks, then read back from the switch's history in etcd (first stop, cutover, pause).
 */
final class LiveSwitch {
  private LiveSwitch() {}

  /** The strategy the filesystem record names. */
  static Strategy current(EtcdConnection conn, String fsName) {
    try (EtcdMetaStore store = EtcdOptions.connect(conn)) {
      FsRecord record = FsRecord.decode(store.get(Keyspace.of(fsName).record())
          .orElseThrow(() -> new IllegalStateException("no filesystem '" + fsName + "' in etcd"))
          .value());
      return new Strategy(record.lockBackend(), record.allocBackend());
    }
  }

  static Cluster.Switched ask(EtcdConnection conn, String fsName, String kind, String to)
      throws Cluster.NotLive, Exception {
    if (kind.equals(SwitchRequests.ALLOC)) {
      // as etcfs switch --alloc answers until the allocator's live switch is built
      throw new Cluster.NotLive("a live switch of the allocator is not built yet");
    }
    try (EtcdMetaStore store = EtcdOptions.connect(conn)) {
      SwitchRequests requests = new SwitchRequests(store, Keyspace.of(fsName));
      String by = "etcfs experiment on " + InetAddress.getLocalHost().getHostName();
      String said;
      try {
        said = requests.request(kind, to, Backends.installedLocks(Home.dir().resolve("bundle")),
            by, SwitchRequests.DEADLINE.plus(Duration.ofSeconds(60)));
      } catch (IllegalArgumentException | IllegalStateException e) {
        throw new Cluster.NotLive(e.getMessage());
      }
      long epoch = requests.lastEpoch();
      Properties h = SwitchRequests.load(store.get(requests.historyKey(epoch))
          .orElseThrow(() -> new IllegalStateException("switch " + epoch + " has no history"))
          .value());
      if (!"done".equals(h.getProperty("result")) || !to.equals(h.getProperty("to"))) {
        throw new IllegalStateException("switch " + epoch + " is recorded as " + h);
      }
      return new Cluster.Switched(epoch, Long.parseLong(h.getProperty("firstStop")),
          Long.parseLong(h.getProperty("cutover")),
          Long.parseLong(h.getProperty("pauseMillis", "-1")), h.getProperty("nodes", ""), said);
    }
  }
}

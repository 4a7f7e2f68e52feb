package io.etcfs.launcher.cli;

import io.etcfs.etcd.client.EtcdMetaStore;
import io.etcfs.launcher.experiment.Cluster;
import io.etcfs.launcher.experiment.Strategy;
import io.etcfs.launcher.node.EtcdConnection;
import io.etcfs.spi.fs.FsRecord;
import io.etcfs.spi.fs.Keyspace;
import io.etcfs.support.switches.SwitchRequests;
import java.net.InetAddress;
import java.nio.file.Path;
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
    Path bundles = Home.dir().resolve("bundle");
    try (EtcdMetaStore store = EtcdOptions.connect(conn)) {
      SwitchRequests requests = new SwitchRequests(store, Keyspace.of(fsName));
      String by = "etcfs experiment on " + InetAddress.getLocalHost().getHostName();
      String said;
      try {
        // as etcfs switch asks: the installed backends of that kind, the same wait
        said = requests.request(kind, to, kind.equals(SwitchRequests.LOCK)
            ? Backends.installedLocks(bundles) : Backends.installedAllocators(bundles), by,
            SwitchRequests.DEADLINE.plus(Duration.ofSeconds(60)));
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

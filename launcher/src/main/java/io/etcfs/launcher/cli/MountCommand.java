package io.etcfs.launcher.cli;

import io.etcfs.etcd.client.EtcdMetaStore;
import io.etcfs.launcher.node.FenceSpec;
import io.etcfs.launcher.node.NodeSpec;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(name = "mount", mixinStandardHelpOptions = true,
    description = {"Start a node runtime serving the filesystem on DEVICE at MOUNTPOINT.",
        "The node runs in the background unless --foreground; stop it with 'etcfs umount'."})
final class MountCommand implements Callable<Integer> {
  @Parameters(index = "0", paramLabel = "DEVICE") Path device;

  @Parameters(index = "1", paramLabel = "MOUNTPOINT") Path mountpoint;

  @Mixin EtcdOptions etcd;

  @Mixin FenceOptions fenceOptions;

  @Option(names = "--name", paramLabel = "FS", defaultValue = "etcfs",
      description = "Filesystem name (default: ${DEFAULT-VALUE}).")
  String name;

  @Option(names = "--node", paramLabel = "NAME", description = "Node name (default: host name).")
  String node;

  @Option(names = "--lease-ttl", paramLabel = "TTL", converter = Units.Time.class,
      defaultValue = "10s", description = "Membership lease TTL (default: ${DEFAULT-VALUE}).")
  Duration leaseTtl;

  @Option(names = "--lock", paramLabel = "BACKEND",
      description = "Lock backend, etcd or hazelcast; must match the filesystem's (default: it).")
  String lock;

  @Option(names = "--state-dir", paramLabel = "DIR",
      description = "Where the pid file, control socket and log go (default: <runtime dir>/FS-NODE).")
  Path stateDir;

  @Option(names = "--log", paramLabel = "FILE", description = "Node log (default: in the state dir).")
  Path log;

  @Option(names = "--foreground", description = {"Run the node in this terminal, with its shell"
      + " where there is one, until it stops; exit with its status (4: it had fenced itself).",
      "'etcfs wait MOUNTPOINT' tells when it serves."})
  boolean foreground;

  @picocli.CommandLine.Mixin FrontendOption frontendOption;

  @picocli.CommandLine.Mixin MetricsOption metricsOption;

  @Override
  public Integer call() throws IOException, InterruptedException {
    FenceSpec fence = fenceOptions.spec();
    fenceOptions.requireReservableDevice(fence, device);
    NodeSpec spec = spec(fence);
    NodeLauncher.checkLocal(spec);
    if (foreground) {
      checkEtcd(spec, -1);
      return NodeLauncher.runForeground(spec);
    }
    // The node's JVM boots while this one checks etcd: a join costs the longer of the two, not
    // their sum. Without --lock the node reads the recorded lock backend itself.
    Process p = NodeLauncher.spawn(spec);
    NodeLauncher.checkWhileStarting(spec, p, () -> checkEtcd(spec, p.pid()));
    NodeLauncher.awaitReady(spec, p);
    MountRegistry.standard().register(spec);
    System.out.println("node " + spec.nodeName() + " joined '" + spec.fsName() + "' (pid "
        + p.pid() + ")");
    System.out.println("  state dir  " + spec.stateDir());
    System.out.println("  log        " + spec.logFile());
    System.out.println("  control    " + spec.socket());
    System.out.println("  mountpoint " + spec.mountpoint());
    System.out.println("undo: etcfs umount " + spec.mountpoint());
    return 0;
  }

  private void checkEtcd(NodeSpec spec, long ownPid) {
    try (EtcdMetaStore store = etcd.connect()) {
      NodeLauncher.checkEtcd(spec, store, ownPid);
    }
  }

  private NodeSpec spec(FenceSpec fence) {
    String nodeName = node != null ? node : hostName();
    if (!nodeName.matches("[A-Za-z0-9][A-Za-z0-9._-]{0,62}")) {
      throw new io.etcfs.launcher.UserError("invalid node name '" + nodeName
          + "' (letters, digits, '.', '_', '-'; at most 63)");
    }
    String backend = lock != null ? lock : "";
    if (lock != null && !backend.equals("etcd") && !backend.equals("hazelcast")) {
      throw new io.etcfs.launcher.UserError("unknown lock backend '" + backend
          + "' (etcd or hazelcast)");
    }
    Path dir = stateDir != null ? stateDir : Home.runtimeDir().resolve(name + "-" + nodeName);
    Path abs = dir.toAbsolutePath().normalize();
    return new NodeSpec(name, nodeName, device.toAbsolutePath().normalize(),
        mountpoint.toAbsolutePath().normalize(), abs,
        log != null ? log.toAbsolutePath() : abs.resolve(nodeName + ".log"),
        etcd.connection(), (int) Math.max(1, leaseTtl.toSeconds()), backend, fence,
        frontendOption.name()).withMetrics(metricsOption.spec(0));
  }

  private static String hostName() {
    try {
      return InetAddress.getLocalHost().getHostName().split("\\.")[0];
    } catch (IOException e) {
      return "node";
    }
  }
}

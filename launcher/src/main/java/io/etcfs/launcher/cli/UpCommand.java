package io.etcfs.launcher.cli;

import io.etcfs.core.format.FormatException;
import io.etcfs.core.format.Formatter;
import io.etcfs.etcd.client.EtcdMetaStore;
import io.etcfs.etcd.local.EtcdProcess;
import io.etcfs.launcher.Failures;
import io.etcfs.launcher.UserError;
import io.etcfs.launcher.node.EtcdConnection;
import io.etcfs.launcher.node.FenceSpec;
import io.etcfs.launcher.node.NodeSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

@Command(name = "up", mixinStandardHelpOptions = true,
    // The first line is the summary in 'etcfs --help': it must be a sentence of its own.
    description = {"Start a whole local cluster on this machine.",
        "A private etcd (unless --etcd), a sparse device image DIR/device.img, and N nodes",
        "mounted at DIR/mnt/node1..N; DIR/cluster.env names them for later commands."})
final class UpCommand implements Callable<Integer> {
  @Option(names = "--nodes", paramLabel = "N", defaultValue = "3",
      description = "Number of nodes (default: ${DEFAULT-VALUE}).")
  int nodes;

  @Option(names = "--dir", paramLabel = "DIR", description = "Cluster directory (default: "
      + "$ETCFS_CLUSTER_DIR, else ~/.local/state/etcfs/cluster).")
  Path dir;

  @Option(names = "--etcd", paramLabel = "URLS",
      description = "Use this etcd instead of starting a private one.")
  String etcd;

  @Option(names = "--size", paramLabel = "SIZE", converter = Units.Size.class, defaultValue = "4G",
      description = "Device image size (default: ${DEFAULT-VALUE}).")
  long size;

  @Option(names = "--name", paramLabel = "FS", defaultValue = "etcfs",
      description = "Filesystem name (default: ${DEFAULT-VALUE}).")
  String name;

  @Option(names = "--fresh", description = "Replace a stopped cluster left in DIR.")
  boolean fresh;

  @Option(names = "--lock", paramLabel = "BACKEND", defaultValue = Backends.DEFAULT_LOCK,
      description = "Inode lock backend, etcd or hazelcast (default: ${DEFAULT-VALUE}).")
  String lock;

  @Option(names = "--alloc", paramLabel = "ALLOCATOR", defaultValue = Backends.DEFAULT_ALLOC,
      description = "Block allocator, arena or shared (default: ${DEFAULT-VALUE}).")
  String alloc;

  @Spec CommandSpec spec;

  @Mixin FenceOptions fenceOptions;

  @Mixin FrontendOption frontendOption;

  @Mixin MetricsOption metricsOption;

  private EtcdProcess ownEtcd;
  private final List<NodeSpec> started = new ArrayList<>();
  private final List<Process> procs = new ArrayList<>();

  @Override
  public Integer call() throws Exception {
    if (nodes < 1 || nodes > 32) {
      throw new UserError("--nodes must be between 1 and 32");
    }
    FenceSpec fence = fenceOptions.spec();
    metricsOption.spec(nodes - 1); // a bad address is refused before anything starts
    if (fence.agent().equals("reservation")) {
      throw fenceOptions.badUsage("--fence-agent reservation needs a shared block device with "
          + "persistent reservations; etcfs up puts its nodes on an image file");
    }
    try {
      // before anything starts: a backend that is unknown or not installed is bad usage
      Path bundles = Home.dir().resolve("bundle");
      Backends.lock(lock, bundles);
      Backends.alloc(alloc, bundles);
    } catch (UserError e) {
      throw new ParameterException(spec.commandLine(), e.getMessage());
    }
    Path d = LocalCluster.dir(dir);
    LocalCluster.prepare(d, fresh);
    try {
      String endpoints = etcd != null ? etcd : startEtcd(d);
      Path device = d.resolve("device.img");
      EtcdConnection conn = EtcdConnection.of(endpoints);
      try (EtcdMetaStore store = EtcdOptions.connect(conn)) {
        new Formatter(store, System.out::println).format(
            new Formatter.Options(device, size, name, true, Formatter.DEFAULT_ARENA_SIZE, lock,
                alloc));
        startNodes(d, device, conn, store, fence);
      }
      new ClusterEnv(endpoints, device, name, d, ownEtcd != null).write();
      if (ownEtcd != null) {
        ownEtcd.detach();
      }
      report(d, endpoints);
      return 0;
    } catch (Exception | Error e) {
      rollBack();
      if (e instanceof FormatException) {
        throw new UserError(e.getMessage());
      }
      throw e;
    }
  }

  private String startEtcd(Path d) throws IOException {
    System.out.println("starting a private etcd in " + d.resolve("etcd"));
    ownEtcd = EtcdProcess.start(d.resolve("etcd"), 1);
    return ownEtcd.endpoints();
  }

  private void startNodes(Path d, Path device, EtcdConnection conn, EtcdMetaStore store,
      FenceSpec fence) throws IOException, InterruptedException {
    for (int i = 1; i <= nodes; i++) {
      String node = "node" + i;
      Path mp = Files.createDirectories(d.resolve("mnt").resolve(node));
      NodeSpec spec = new NodeSpec(name, node, device, mp, d.resolve("run"),
          d.resolve("log").resolve(node + ".log"), conn, 10, lock, fence,
          frontendOption.name(), alloc).withMetrics(metricsOption.spec(i - 1));
      NodeLauncher.check(spec, store);
      procs.add(NodeLauncher.spawn(spec));
      started.add(spec);
    }
    System.out.println("starting " + nodes + " node" + (nodes > 1 ? "s" : "") + " ...");
    for (int i = 0; i < procs.size(); i++) {
      NodeLauncher.awaitReady(started.get(i), procs.get(i));
      MountRegistry.standard().register(started.get(i));
      System.out.println("  " + started.get(i).nodeName() + " ready (pid " + procs.get(i).pid()
          + ") at " + started.get(i).mountpoint());
    }
    // Nodes become ready one after another, and on a loaded machine the first may have lost
    // its mount (or fenced itself) by the time the last is up: "every node ready" is said only
    // of every node at once.
    for (int i = 0; i < procs.size(); i++) {
      NodeSpec s = started.get(i);
      if (!procs.get(i).isAlive()) {
        throw new UserError("node " + s.nodeName() + " exited after it was ready (see "
            + s.logFile() + ")");
      }
      Optional<String> problem = NodeLauncher.notServing(s);
      if (problem.isPresent()) {
        throw new UserError("node " + s.nodeName() + " no longer serves " + s.mountpoint() + ": "
            + problem.get() + " (see " + s.logFile() + ")");
      }
    }
  }

  private void rollBack() {
    for (int i = 0; i < started.size(); i++) {
      NodeSpec s = started.get(i);
      try {
        // By its process, not its pid file: a node still booting has not written one yet.
        NodeStopper.stop(s, OptionalLong.of(procs.get(i).pid()));
        MountRegistry.standard().remove(s.mountpoint());
      } catch (IOException | InterruptedException | RuntimeException e) {
        System.err.println("etcfs: could not stop " + s.nodeName() + ": " + Failures.describe(e));
      }
    }
    if (ownEtcd != null) {
      ownEtcd.stop();
    }
  }

  private void report(Path d, String endpoints) {
    System.out.println();
    System.out.println("cluster up in " + d + " (etcd " + endpoints + "; locks " + lock
        + ", allocator " + alloc + ")");
    System.out.println("  look around:  etcfs status --dir " + d);
    System.out.println("                etcfs shell " + d.resolve("mnt/node1") + " -c 'lb'");
    System.out.println("                source " + ClusterEnv.file(d) + "   # ETCFS_ETCD, ETCFS_DEVICE");
    System.out.println("  stop it:      etcfs down --dir " + d);
    System.out.println("  logs:         " + d.resolve("log"));
  }
}

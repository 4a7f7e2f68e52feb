package io.etcfs.launcher.cli;

import io.etcfs.launcher.node.NodeSpec;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "down", mixinStandardHelpOptions = true,
    description = {"Stop a local cluster made by 'etcfs up': every node, then its private etcd.",
        "Every node serving one of DIR/mnt/*, also one mounted there by hand, is stopped first."})
final class DownCommand implements Callable<Integer> {
  @Option(names = "--dir", paramLabel = "DIR", description = "Cluster directory (default: as for up).")
  Path dir;

  @Override
  public Integer call() throws Exception {
    Path d = LocalCluster.dir(dir);
    ClusterEnv env = ClusterEnv.read(d);
    List<Path> mountpoints = LocalCluster.mountpoints(d);
    // Every node serving one of the cluster's mountpoints goes, not only those 'up' started: a
    // node mounted by hand at DIR/mnt/nodeK (the README's remount with cluster.env) would
    // otherwise be left running against an etcd that is about to stop.
    for (Server s : servers(d, mountpoints)) {
      String how = NodeStopper.stop(s.spec(), s.pid());
      MountRegistry.standard().removeIfServedBy(s.spec());
      System.out.println(s.label(d) + ": " + how);
    }
    NodeArchive.settle(); // class-data archives the nodes wrote at their exit go in place now
    for (Path mp : mountpoints) {
      // A mount whose node died without any record left (no spec, no JVM) is detached too.
      String how = NodeStopper.detachIfDead(mp);
      if (!how.isEmpty()) {
        System.out.println(mp + ": " + how.substring("; ".length()));
      }
    }
    if (env.ownEtcd()) {
      for (long pid : LocalCluster.etcdPids(d)) {
        ProcessHandle.of(pid).filter(ProcessHandle::isAlive).ifPresent(DownCommand::stopEtcd);
      }
      System.out.println("etcd: stopped");
    }
    System.out.println("cluster in " + d + " is down; its data is kept (start again with"
        + " 'etcfs up --fresh --dir " + d + "', or remove the directory)");
    return 0;
  }

  /**
   * A node to stop.
   *
   * @param spec its spec
   * @param pid its JVM, when it was found running rather than through its records
   */
  private record Server(NodeSpec spec, OptionalLong pid) {
    String label(Path clusterDir) {
      return spec.stateDir().equals(clusterDir.resolve("run")) ? spec.nodeName()
          : spec.nodeName() + " (" + spec.mountpoint() + ")";
    }
  }

  /**
   * The cluster's own nodes (their specs in DIR/run), then whoever else serves one of its
   * mountpoints: the node its mount record names, and any node JVM running for it.
   */
  private static List<Server> servers(Path d, List<Path> mountpoints) throws IOException {
    Map<Path, Server> bySpec = new LinkedHashMap<>();
    for (NodeSpec spec : LocalCluster.nodes(d)) {
      bySpec.putIfAbsent(spec.specFile(), new Server(spec, OptionalLong.empty()));
    }
    for (Path mp : mountpoints) {
      MountRegistry.standard().find(mp).ifPresent(
          spec -> bySpec.putIfAbsent(spec.specFile(), new Server(spec, OptionalLong.empty())));
    }
    for (NodeProcesses.Node n : NodeProcesses.serving(mountpoints)) {
      bySpec.put(n.spec().specFile(), new Server(n.spec(), OptionalLong.of(n.pid())));
    }
    return new ArrayList<>(bySpec.values());
  }

  private static void stopEtcd(ProcessHandle p) {
    p.destroy();
    try {
      p.onExit().get(15, TimeUnit.SECONDS);
    } catch (Exception e) {
      p.destroyForcibly();
    }
  }
}

package io.etcfs.launcher.cli;

import io.etcfs.launcher.node.NodeSpec;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "down", mixinStandardHelpOptions = true,
    description = "Stop a local cluster made by 'etcfs up': every node, then its private etcd.")
final class DownCommand implements Callable<Integer> {
  @Option(names = "--dir", paramLabel = "DIR", description = "Cluster directory (default: as for up).")
  Path dir;

  @Override
  public Integer call() throws Exception {
    Path d = LocalCluster.dir(dir);
    ClusterEnv env = ClusterEnv.read(d);
    for (NodeSpec spec : LocalCluster.nodes(d)) {
      String how = NodeStopper.stop(spec);
      MountRegistry.standard().remove(spec.mountpoint());
      System.out.println(spec.nodeName() + ": " + how);
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

  private static void stopEtcd(ProcessHandle p) {
    p.destroy();
    try {
      p.onExit().get(15, TimeUnit.SECONDS);
    } catch (Exception e) {
      p.destroyForcibly();
    }
  }
}

package io.etcfs.launcher.cli;

import io.etcfs.launcher.node.NodeSpec;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

@Command(name = "umount", mixinStandardHelpOptions = true,
    description = "Stop the node serving MOUNTPOINT: it flushes, leaves the cluster and exits.")
final class UmountCommand implements Callable<Integer> {
  @Parameters(index = "0", paramLabel = "MOUNTPOINT") Path mountpoint;

  @Override
  public Integer call() throws IOException, InterruptedException {
    MountRegistry registry = MountRegistry.standard();
    if (registry.find(mountpoint).isEmpty() && "fuse.etcfs".equals(Mounts.fsType(mountpoint))) {
      // No node record (its runtime dir was lost) but an etcfs mount: a dead node's leftover.
      if (!Mounts.detach(mountpoint)) {
        throw new io.etcfs.launcher.UserError("cannot detach the etcfs mount at " + mountpoint);
      }
      System.out.println("detached the etcfs mount at " + mountpoint + " (no node was serving it)");
      return 0;
    }
    NodeSpec spec = registry.require(mountpoint);
    String how = NodeStopper.stop(spec);
    registry.remove(spec.mountpoint());
    NodeArchive.settle(); // a class-data archive the node wrote at its exit goes in place now
    System.out.println("node " + spec.nodeName() + " " + how + "; " + spec.mountpoint()
        + " is no longer served");
    return 0;
  }
}

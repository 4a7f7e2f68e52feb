package io.etcfs.launcher.cli;

import io.etcfs.launcher.UserError;
import io.etcfs.launcher.node.NodeSpec;
import picocli.CommandLine.Option;

/** {@code --frontend}: which FUSE front end the node mounts with. */
final class FrontendOption {
  @Option(names = "--frontend", paramLabel = "NAME", defaultValue = "${env:ETCFS_FRONTEND:-" + NodeSpec.LOWLEVEL + "}",
      description = "FUSE front end: lowlevel (libfuse 3, kernel-side caching; falls back to "
          + "highlevel where libfuse 3 is missing) or highlevel (libfuse 2) "
          + "(default: $ETCFS_FRONTEND, else lowlevel).")
  String frontend;

  String name() {
    if (!frontend.equals(NodeSpec.LOWLEVEL) && !frontend.equals(NodeSpec.HIGHLEVEL)) {
      throw new UserError("unknown front end '" + frontend + "' (lowlevel or highlevel)");
    }
    return frontend;
  }
}

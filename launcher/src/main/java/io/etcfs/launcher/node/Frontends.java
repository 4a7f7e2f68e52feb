package io.etcfs.launcher.node;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.logging.Logger;

/**
 * Which FUSE front end a node runs. The low-level one (libfuse 3) is the default; where
 * libfuse3.so.3 is not installed the node says so in one log line and mounts through libfuse 2
 * instead, so a machine without the package still gets a working mount.
 */
final class Frontends {
  private static final Logger LOG = Logger.getLogger(Frontends.class.getName());
  static final String LIBFUSE3 = "libfuse3.so.3";
  /** Where Debian, Fedora and source builds put shared libraries. */
  static final List<String> LIBRARY_DIRS = List.of("/lib/x86_64-linux-gnu",
      "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
      "/lib64", "/usr/lib64", "/lib", "/usr/lib", "/usr/local/lib");
  /** Names the library file to look for instead of searching (tests use it to hide it). */
  static final String LIBRARY_PROPERTY = "etcfs.libfuse3";

  private Frontends() {}

  static NodeSpec resolve(NodeSpec spec) {
    if (!spec.frontend().equals(NodeSpec.LOWLEVEL) || libfuse3().isPresent()) {
      return spec;
    }
    LOG.warning(LIBFUSE3 + " not found (install the libfuse3-3 package): mounting through "
        + "libfuse 2 (--frontend " + NodeSpec.HIGHLEVEL + ") instead");
    return spec.withFrontend(NodeSpec.HIGHLEVEL);
  }

  static Optional<Path> libfuse3() {
    String named = System.getProperty(LIBRARY_PROPERTY);
    if (named != null) {
      return Optional.of(Path.of(named)).filter(Files::exists);
    }
    return LIBRARY_DIRS.stream().map(d -> Path.of(d, LIBFUSE3)).filter(Files::exists).findFirst();
  }
}

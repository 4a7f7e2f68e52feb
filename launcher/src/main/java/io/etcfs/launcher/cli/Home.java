package io.etcfs.launcher.cli;

import io.etcfs.launcher.UserError;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/** Where etcfs is installed (set by bin/etcfs as the {@code etcfs.home} system property). */
final class Home {
  private Home() {}

  static Path dir() {
    String home = System.getProperty("etcfs.home");
    if (home == null) {
      throw new UserError("etcfs.home is not set: run etcfs through bin/etcfs");
    }
    return Path.of(home);
  }

  static Path java() {
    return Path.of(ProcessHandle.current().info().command()
        .orElseThrow(() -> new UserError("cannot tell which java runs etcfs")));
  }

  /**
   * The node JVM's class path: only the launcher and the Felix framework. Everything else a
   * node runs comes from the bundles, each in its own class space.
   */
  static String nodeClassPath() {
    try (Stream<Path> jars = Files.list(dir().resolve("lib"))) {
      List<Path> cp = jars.filter(p -> {
        String n = p.getFileName().toString();
        return n.startsWith("etcfs-launcher") || n.startsWith("org.apache.felix.framework");
      }).sorted().toList();
      if (cp.size() != 2) {
        throw new UserError("broken installation: " + dir().resolve("lib")
            + " must hold the launcher and the Felix framework");
      }
      return cp.stream().map(Path::toString).collect(Collectors.joining(":"));
    } catch (IOException e) {
      throw new UserError("broken installation: " + e.getMessage());
    }
  }

  /**
   * The directory for mount records and default node state: {@code $ETCFS_RUNTIME_DIR}, else
   * {@code /run/etcfs} for root, else {@code $XDG_RUNTIME_DIR/etcfs}, else
   * {@code /tmp/etcfs-<user>}.
   */
  static Path runtimeDir() {
    String explicit = System.getenv("ETCFS_RUNTIME_DIR");
    if (explicit != null && !explicit.isBlank()) {
      return Path.of(explicit);
    }
    if ("root".equals(System.getProperty("user.name"))) {
      return Path.of("/run/etcfs");
    }
    String xdg = System.getenv("XDG_RUNTIME_DIR");
    if (xdg != null && !xdg.isBlank()) {
      return Path.of(xdg, "etcfs");
    }
    return Path.of("/tmp", "etcfs-" + System.getProperty("user.name"));
  }
}

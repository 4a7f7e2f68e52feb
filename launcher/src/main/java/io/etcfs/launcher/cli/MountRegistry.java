package io.etcfs.launcher.cli;

import io.etcfs.launcher.UserError;
import io.etcfs.launcher.node.NodeSpec;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Which node serves which mountpoint: one file per mountpoint under
 * {@code <runtime dir>/mounts/}, holding the path of the node's spec. {@code umount} and
 * {@code shell} find a node's control socket through it.
 */
final class MountRegistry {
  private final Path dir;

  MountRegistry(Path runtimeDir) {
    this.dir = runtimeDir.resolve("mounts");
  }

  static MountRegistry standard() {
    return new MountRegistry(Home.runtimeDir());
  }

  private Path entry(Path mountpoint) {
    String abs = mountpoint.toAbsolutePath().normalize().toString();
    return dir.resolve(URLEncoder.encode(abs, StandardCharsets.UTF_8));
  }

  void register(NodeSpec spec) throws IOException {
    Files.createDirectories(dir);
    Files.writeString(entry(spec.mountpoint()), spec.specFile().toString() + "\n");
  }

  void remove(Path mountpoint) throws IOException {
    Files.deleteIfExists(entry(mountpoint));
  }

  /**
   * Removes the record of {@code spec}'s mountpoint if it still names {@code spec}: another node
   * may have mounted that path since, and its record stays.
   */
  void removeIfServedBy(NodeSpec spec) throws IOException {
    Path e = entry(spec.mountpoint());
    try {
      if (Path.of(Files.readString(e).strip()).equals(spec.specFile())) {
        Files.deleteIfExists(e);
      }
    } catch (java.nio.file.NoSuchFileException ex) {
      // no record: nothing to remove
    }
  }

  /** The spec of the node registered for {@code mountpoint}, if its record is still there. */
  Optional<NodeSpec> find(Path mountpoint) {
    Path e = entry(mountpoint);
    if (!Files.exists(e)) {
      return Optional.empty();
    }
    try {
      Path spec = Path.of(Files.readString(e).strip());
      return Files.exists(spec) ? Optional.of(NodeSpec.read(spec)) : Optional.empty();
    } catch (IOException ex) {
      throw new UserError("cannot read mount record " + e + ": " + ex.getMessage());
    }
  }

  NodeSpec require(Path mountpoint) {
    return find(mountpoint).orElseThrow(
        () -> new UserError("no etcfs node serves " + mountpoint.toAbsolutePath().normalize()));
  }
}

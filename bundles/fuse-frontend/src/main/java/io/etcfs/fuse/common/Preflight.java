package io.etcfs.fuse.common;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/** The checks that give a refused mount a one-line reason (libfuse's goes to stderr). */
public final class Preflight {
  public static final Path DEV_FUSE = Path.of("/dev/fuse");

  private Preflight() {}

  public static Path check(Path mountpoint) {
    Path path = mountpoint.toAbsolutePath().normalize();
    if (!Files.exists(DEV_FUSE)) {
      throw refused(path, DEV_FUSE + " is missing (load the fuse kernel module)");
    }
    Optional<MountInfo> mounted = MountInfo.at(path);
    if (mounted.isPresent()) {
      throw refused(path, "already mounted (" + mounted.get().type() + " "
          + mounted.get().source() + "); unmount it first, e.g. fusermount -uz " + path);
    }
    if (!Files.isDirectory(path)) {
      throw refused(path, Files.exists(path) ? "not a directory" : "no such directory");
    }
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(path)) {
      if (entries.iterator().hasNext()) {
        throw refused(path, "the mountpoint is not empty");
      }
      return path.toRealPath();
    } catch (IOException e) {
      throw refused(path, e.toString());
    }
  }

  private static IllegalStateException refused(Path mountpoint, String why) {
    return new IllegalStateException("cannot mount etcfs at " + mountpoint + ": " + why);
  }
}

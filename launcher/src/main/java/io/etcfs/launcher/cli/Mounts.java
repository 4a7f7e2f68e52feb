package io.etcfs.launcher.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/** The kernel's view of mounts, and the lazy unmount that clears a dead node's FUSE mount. */
final class Mounts {
  private Mounts() {}

  /** True if something is mounted at {@code mountpoint}. */
  static boolean isMounted(Path mountpoint) {
    return fsType(mountpoint) != null;
  }

  /**
   * The type of what is mounted at {@code mountpoint} ({@code fuse.etcfs} for etcfs), or null.
   * Read from /proc/self/mountinfo: field 5 is the mountpoint (octal-escaped), the type follows
   * the " - " separator.
   */
  static String fsType(Path mountpoint) {
    String mp = mountpoint.toAbsolutePath().normalize().toString()
        .replace("\\", "\\134").replace(" ", "\\040").replace("\t", "\\011").replace("\n", "\\012");
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/mountinfo"))) {
        String[] f = line.split(" ");
        int sep = line.indexOf(" - ");
        if (f.length > 4 && f[4].equals(mp) && sep > 0) {
          return line.substring(sep + 3).split(" ")[0];
        }
      }
    } catch (IOException e) {
      return null;
    }
    return null;
  }

  /**
   * Detaches a mount whose node is gone ("Transport endpoint is not connected"): {@code
   * fusermount -u -z}, bounded in time. Returns whether the mountpoint is free afterwards.
   */
  static boolean detach(Path mountpoint) throws InterruptedException {
    try {
      Process p = new ProcessBuilder("fusermount", "-u", "-z", mountpoint.toString())
          .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly();
      }
    } catch (IOException e) {
      return false;
    }
    return !isMounted(mountpoint);
  }
}

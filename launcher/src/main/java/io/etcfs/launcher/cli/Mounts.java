package io.etcfs.launcher.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** The kernel's view of mounts, and the lazy unmount that clears a dead node's FUSE mount. */
final class Mounts {
  /** The type the kernel lists for an etcfs FUSE mount (subtype=etcfs). */
  static final String ETCFS_TYPE = "fuse.etcfs";

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

  /** What a {@code stat} of a mount root found. */
  enum Probe {
    /** it answered */
    ANSWERS,
    /** it failed at once: the node behind the mount is gone ("Transport endpoint is not connected") */
    FAILS,
    /** no answer within the bound: the node behind it may be alive but busy or stuck */
    SILENT
  }

  /**
   * Stats {@code path}, on a thread of its own: a FUSE mount whose node is alive but stuck would
   * hold the caller in the kernel for as long as the node does.
   */
  static Probe probe(Path path, Duration bound) {
    CompletableFuture<Probe> stat = new CompletableFuture<>();
    Thread t = new Thread(() -> {
      try {
        Files.readAttributes(path, BasicFileAttributes.class);
        stat.complete(Probe.ANSWERS);
      } catch (IOException | RuntimeException e) {
        stat.complete(Probe.FAILS);
      }
    }, "etcfs-stat " + path);
    t.setDaemon(true);
    t.start();
    try {
      return stat.get(bound.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      return Probe.SILENT;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Probe.SILENT;
    } catch (ExecutionException e) {
      return Probe.FAILS;
    }
  }

  /**
   * Whether {@code mountpoint} is, right now, an etcfs mount that answers: listed as
   * {@code fuse.etcfs} in this process's mount table, its root answers {@code stat}, and the
   * root is on another device than its parent (so the stat reached the mount, not the directory
   * under it). Empty if so; otherwise what is wrong, for the user.
   */
  static Optional<String> notServing(Path mountpoint, Duration bound) {
    Path mp = mountpoint.toAbsolutePath().normalize();
    String type = fsType(mp);
    if (type == null) {
      return Optional.of("nothing is mounted at " + mp);
    }
    if (!type.equals(ETCFS_TYPE)) {
      return Optional.of(mp + " is a " + type + " mount, not etcfs");
    }
    Probe p = probe(mp, bound);
    if (p != Probe.ANSWERS) {
      return Optional.of("stat " + mp + (p == Probe.FAILS ? " fails" : " does not answer within "
          + bound.toMillis() + " ms"));
    }
    try {
      Object dev = Files.getAttribute(mp, "unix:dev");
      Object parentDev = Files.getAttribute(mp.getParent(), "unix:dev");
      if (dev.equals(parentDev)) {
        return Optional.of("stat " + mp + " reaches the directory under the mount, not etcfs");
      }
    } catch (IOException | UnsupportedOperationException e) {
      return Optional.of("stat " + mp + " fails (" + e.getMessage() + ")");
    }
    return Optional.empty();
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

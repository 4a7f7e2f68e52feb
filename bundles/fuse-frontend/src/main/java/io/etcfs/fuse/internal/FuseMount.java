package io.etcfs.fuse.internal;

import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One live mount: libfuse's blocking main loop on a thread of its own. Ready is when the mount
 * shows in /proc/self/mountinfo (jnr-fuse's non-blocking mount instead sleeps a fixed 2 s).
 * Closing unmounts with fusermount -u, lazily (-uz) if the mount is busy, and waits a bounded
 * time for the loop to end.
 */
final class FuseMount implements AutoCloseable {
  private static final Logger LOG = System.getLogger(FuseMount.class.getName());
  static final Path DEV_FUSE = Path.of("/dev/fuse");
  static final String FS_TYPE = "fuse." + EtcfsFuse.TYPE;

  private final EtcfsFuse fs;
  private final Path mountpoint;
  private final CompletableFuture<Integer> exit = new CompletableFuture<>();
  private final Duration unmountTimeout;

  private FuseMount(EtcfsFuse fs, Path mountpoint, Duration unmountTimeout) {
    this.fs = fs;
    this.mountpoint = mountpoint;
    this.unmountTimeout = unmountTimeout;
  }

  /** Mounts, or fails with one line saying why. */
  static FuseMount mount(EtcfsFuse fs, MountOptions options) {
    Path mountpoint = Preflight.check(options.mountpoint());
    FuseMount mount = new FuseMount(fs, mountpoint, options.unmountTimeout());
    List<String> args = new ArrayList<>(options.arguments());
    args.add(mountpoint.toString());
    Thread loop = new Thread(() -> mount.run(args), "etcfs-fuse " + mountpoint);
    loop.setDaemon(true);
    loop.start();
    mount.awaitMounted(options.mountTimeout());
    return mount;
  }

  Path mountpoint() {
    return mountpoint;
  }

  boolean isMounted() {
    return MountInfo.at(mountpoint).filter(m -> FS_TYPE.equals(m.type())).isPresent();
  }

  private void run(List<String> args) {
    try {
      exit.complete(fs.runMain(args));
    } catch (Throwable t) {
      exit.completeExceptionally(t);
    }
  }

  private void awaitMounted(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!isMounted()) {
      if (exit.isDone()) {
        throw new IllegalStateException("cannot mount etcfs at " + mountpoint
            + ": libfuse refused (" + exitStatus() + "; its reason is on the node's stderr)");
      }
      if (System.nanoTime() > deadline) {
        close();
        throw new IllegalStateException("cannot mount etcfs at " + mountpoint
            + ": not mounted after " + timeout.toMillis() + " ms");
      }
      sleep(5);
    }
    LOG.log(Level.INFO, "etcfs mounted at {0}", mountpoint);
  }

  private String exitStatus() {
    try {
      return "fuse_main returned " + exit.getNow(null);
    } catch (RuntimeException e) {
      return "fuse_main threw " + e.getCause();
    }
  }

  /** Unmounts; bounded by the unmount timeout whatever the kernel or the callers do. */
  @Override
  public void close() {
    long half = unmountTimeout.toMillis() / 2;
    if (!exit.isDone()) {
      Fusermount.run(half, "-u", mountpoint.toString());
      if (!awaitExit(half / 2) && isMounted()) {
        LOG.log(Level.WARNING, "{0} is busy: detaching it lazily", mountpoint);
        Optional<MountInfo> info = MountInfo.at(mountpoint);
        Fusermount.run(half, "-uz", mountpoint.toString());
        info.ifPresent(Fusermount::abortConnection);
        awaitExit(half);
      }
    }
    if (!exit.isDone()) {
      LOG.log(Level.WARNING, "libfuse''s loop for {0} did not end in time", mountpoint);
    }
    fs.releaseAll();
    LOG.log(Level.INFO, "etcfs unmounted from {0}", mountpoint);
  }

  private boolean awaitExit(long millis) {
    try {
      exit.get(millis, TimeUnit.MILLISECONDS);
      return true;
    } catch (TimeoutException e) {
      return false;
    } catch (ExecutionException e) {
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return exit.isDone();
    }
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while mounting", e);
    }
  }

  /** The checks that give a refused mount a one-line reason (libfuse's goes to stderr). */
  static final class Preflight {
    private Preflight() {}

    static Path check(Path mountpoint) {
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
}

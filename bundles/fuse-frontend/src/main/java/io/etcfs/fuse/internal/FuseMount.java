package io.etcfs.fuse.internal;

import io.etcfs.fuse.common.FuseLoop;
import io.etcfs.fuse.common.Preflight;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * One live mount: libfuse's blocking main loop on a thread of its own. Ready is when the mount
 * shows in /proc/self/mountinfo (jnr-fuse's non-blocking mount instead sleeps a fixed 2 s).
 * Closing unmounts with fusermount -u, lazily (-uz) if the mount is busy, and waits a bounded
 * time for the loop to end.
 */
final class FuseMount implements AutoCloseable {
  private static final Logger LOG = System.getLogger(FuseMount.class.getName());
  static final String FS_TYPE = "fuse." + EtcfsFuse.TYPE;

  private final EtcfsFuse fs;
  private final Path mountpoint;
  private final Duration unmountTimeout;
  private FuseLoop loop;

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
    mount.loop = new FuseLoop(mountpoint, FS_TYPE, "etcfs-fuse " + mountpoint,
        () -> fs.runMain(args));
    mount.awaitMounted(options.mountTimeout());
    return mount;
  }

  Path mountpoint() {
    return mountpoint;
  }

  boolean isMounted() {
    return loop.isMounted();
  }

  private void awaitMounted(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!isMounted()) {
      if (loop.ended()) {
        throw new IllegalStateException("cannot mount etcfs at " + mountpoint
            + ": libfuse refused (" + loop.exitStatus("fuse_main")
            + "; its reason is on the node's stderr)");
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

  /** Unmounts; bounded by the unmount timeout whatever the kernel or the callers do. */
  @Override
  public void close() {
    loop.unmount(unmountTimeout);
    fs.releaseAll();
    LOG.log(Level.INFO, "etcfs unmounted from {0}", mountpoint);
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while mounting", e);
    }
  }
}

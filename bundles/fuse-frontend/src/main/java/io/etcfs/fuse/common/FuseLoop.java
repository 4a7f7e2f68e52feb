package io.etcfs.fuse.common;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.IntSupplier;

/**
 * libfuse's loop on a thread of its own, and the bounded way to end it: fusermount -u, then a
 * lazy detach with the connection aborted if the mount is busy. Both front ends run their mount
 * this way.
 */
public final class FuseLoop {
  private static final Logger LOG = System.getLogger(FuseLoop.class.getName());

  private final Path mountpoint;
  private final String fsType;
  private final CompletableFuture<Integer> exit = new CompletableFuture<>();

  /** Starts {@code loop} (libfuse's blocking main loop) on a daemon thread named {@code name}. */
  public FuseLoop(Path mountpoint, String fsType, String name, IntSupplier loop) {
    this.mountpoint = mountpoint;
    this.fsType = fsType;
    Thread t = new Thread(() -> {
      try {
        exit.complete(loop.getAsInt());
      } catch (Throwable e) {
        exit.completeExceptionally(e);
      }
    }, name);
    t.setDaemon(true);
    t.start();
  }

  public boolean ended() {
    return exit.isDone();
  }

  /** How the loop ended, for a refused mount's message. */
  public String exitStatus(String function) {
    try {
      return function + " returned " + exit.getNow(null);
    } catch (RuntimeException e) {
      return function + " threw " + e.getCause();
    }
  }

  public boolean isMounted() {
    return MountInfo.at(mountpoint).filter(m -> fsType.equals(m.type())).isPresent();
  }

  /**
   * Unmounts and waits for the loop, all within {@code timeout} whatever the kernel or the
   * callers do; true if the loop has ended.
   */
  public boolean unmount(Duration timeout) {
    long half = timeout.toMillis() / 2;
    if (!exit.isDone()) {
      Fusermount.run(half, "-u", mountpoint.toString());
      if (!await(half / 2) && isMounted()) {
        LOG.log(Level.WARNING, "{0} is busy: detaching it lazily", mountpoint);
        Optional<MountInfo> info = MountInfo.at(mountpoint);
        Fusermount.run(half, "-uz", mountpoint.toString());
        info.ifPresent(Fusermount::abortConnection);
        await(half);
      }
    }
    if (!exit.isDone()) {
      LOG.log(Level.WARNING, "libfuse''s loop for {0} did not end in time", mountpoint);
    }
    return exit.isDone();
  }

  private boolean await(long millis) {
    try {
      exit.get(Math.max(millis, 1), TimeUnit.MILLISECONDS);
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
}

package io.etcfs.core.fs.plock;

import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.support.retry.Backoff;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * How a blocking lock call (F_SETLKW, flock without LOCK_NB) waits, and the retry budget of every
 * lock change.
 *
 * <p>libfuse 2 hands a callback no interrupt, but it records the kernel's FUSE_INTERRUPT (sent when
 * the waiting process gets a signal, SIGKILL included) where {@code fuse_interrupted()} reads it;
 * the front end passes that check in, and the wait looks at it every {@link #POLL_NANOS}. An
 * interrupted wait answers EINTR, which the kernel turns into exactly what a local lock does on a
 * signal: the process dies, the call restarts (SA_RESTART), or it fails with EINTR.
 *
 * <p>Without a signal, EINTR would not reach the caller as EINTR: the kernel makes it
 * ERESTARTSYS, which leaks out as errno 512. So the bound, a backstop for interrupts that cannot
 * arrive (a single-threaded FUSE loop has no thread to read them), answers ENOLCK ("no locks
 * available"), the errno fcntl(2) and flock(2) give for a lock the system could not provide.
 */
final class Waits {
  /** Changes that keep losing the race to other owners give up with EIO after this many. */
  private static final int MAX_ATTEMPTS = 64;
  /** How often a waiting call asks whether its caller was interrupted. */
  static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

  private final Duration bound;

  Waits(Duration bound) {
    this.bound = bound;
  }

  long deadline() {
    return System.nanoTime() + bound.toNanos();
  }

  /**
   * Waits for {@code table} to change after {@code revision}; fails with EINTR once {@code
   * interrupted} says so and with ENOLCK at {@code deadline}.
   */
  void await(FileLockTable table, byte[] key, long revision, long deadline,
      BooleanSupplier interrupted, String what) throws FsException {
    try (FileLockTable.Change change = table.watch(key, revision)) {
      while (true) {
        if (interrupted.getAsBoolean() || Thread.currentThread().isInterrupted()) {
          throw new FsException(Errno.EINTR, what + ": the waiting caller was interrupted");
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new FsException(Errno.ENOLCK, what + ": still held by another owner after "
              + bound.toSeconds() + " s (the configured bound, lockWaitSeconds)");
        }
        if (change.await(Math.min(left, POLL_NANOS))) {
          return;
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new FsException(Errno.EINTR, what + ": interrupted");
    }
  }

  /** Between attempts after a lost commit race: up to 0.2 ms, doubling to 4 ms, jittered. */
  private static final Backoff CONFLICT =
      new Backoff(Duration.ofNanos(200_000), Duration.ofMillis(4));

  /** After a lost commit race: a short jittered pause, or EIO once the budget is spent. */
  void conflict(int attempt, String what) throws FsException {
    if (attempt + 1 >= MAX_ATTEMPTS) {
      throw new FsException(Errno.EIO, what + ": still conflicting after " + MAX_ATTEMPTS
          + " attempts");
    }
    try {
      CONFLICT.sleepJittered(attempt);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new FsException(Errno.EINTR, what + ": interrupted");
    }
  }
}

package io.etcfs.core.fs.plock;

import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The bound on a blocking lock call (F_SETLKW, flock without LOCK_NB) and the retry budget of
 * every lock change. libfuse 2 passes no interrupt to a callback and the kernel waits for its
 * answer uninterruptibly, so an unbounded wait would leave the caller unkillable: past the bound
 * the call answers EINTR, which is what an interrupted F_SETLKW returns, and programs that retry
 * on EINTR (glibc users with SA_RESTART loops, Java's FileChannel.lock, util-linux flock) go on
 * waiting in a new call.
 */
final class Waits {
  /** Changes that keep losing the race to other owners give up with EIO after this many. */
  private static final int MAX_ATTEMPTS = 64;

  private final Duration bound;

  Waits(Duration bound) {
    this.bound = bound;
  }

  long deadline() {
    return System.nanoTime() + bound.toNanos();
  }

  /** Waits for {@code table} to change after {@code revision}, or fails with EINTR. */
  void await(LockTable table, byte[] key, long revision, long deadline, String what)
      throws FsException {
    try {
      if (System.nanoTime() - deadline < 0 && table.awaitChange(key, revision, deadline)) {
        return;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    throw new FsException(Errno.EINTR, what + ": still held by another owner after "
        + bound.toSeconds() + " s; the caller sees EINTR and may ask again");
  }

  /** After a lost commit race: a short jittered pause, or EIO once the budget is spent. */
  void conflict(int attempt, String what) throws FsException {
    if (attempt + 1 >= MAX_ATTEMPTS) {
      throw new FsException(Errno.EIO, what + ": still conflicting after " + MAX_ATTEMPTS
          + " attempts");
    }
    if (attempt > 0) {
      long micros = ThreadLocalRandom.current().nextLong(100, 200L * Math.min(attempt, 20));
      try {
        Thread.sleep(micros / 1000, (int) (micros % 1000) * 1000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new FsException(Errno.EINTR, what + ": interrupted");
      }
    }
  }
}

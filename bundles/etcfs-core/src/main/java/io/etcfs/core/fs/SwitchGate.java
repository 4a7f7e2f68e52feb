package io.etcfs.core.fs;

import io.etcfs.spi.meta.NoWait;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;

/**
 * Where a call that needs an inode lock waits while a switch of lock backend or allocator runs
 * on the cluster (issue #15): closed from the moment this node stops taking locks under the old
 * backend until it runs under the new one, or the switch rolls back. A waiting call holds no
 * lock (see {@link InodeLocks#hold}), so the drain is never stuck behind it; it sees a pause,
 * and an EIO only if the switch outlasts its wait.
 */
final class SwitchGate {
  /** Volatile: every lock a call asks for reads it, and a lock there would be contended. */
  private volatile boolean closed;
  private long closedAt;
  private long closedAtNanos;

  /** From now on, calls that need a lock wait. */
  synchronized void close() {
    if (!closed) {
      closed = true;
      closedAt = System.currentTimeMillis();
      closedAtNanos = System.nanoTime();
    }
  }

  /** Lets the waiting calls in. */
  synchronized void open() {
    closed = false;
    notifyAll();
  }

  boolean closed() {
    return closed;
  }

  /** When the gate last closed (epoch milliseconds), for the switch's pause. */
  synchronized long closedAt() {
    return closedAt;
  }

  /**
   * How long a call waits at the gate, at the least: past the switch's deadline (by which it
   * cuts over or rolls back) with room for the nodes to bind the new backend and follow.
   */
  static final long LEAST_WAIT_NANOS = Switches.DEADLINE.plusSeconds(60).toNanos();

  /**
   * Returns at once while open; else waits until it opens, or {@code deadlineNanos} passes and
   * the gate has been closed for {@link #LEAST_WAIT_NANOS}.
   *
   * @throws FsException EIO once the wait is over with the gate still closed
   */
  void pass(long deadlineNanos) throws FsException {
    while (!awaitOpen(deadlineNanos, Long.MAX_VALUE)) {
      // only an open gate ends this wait
    }
  }

  /** Wakes the waiting calls to look again (a lock began to be let go: see InodeLocks#hold). */
  synchronized void poke() {
    notifyAll();
  }

  /**
   * As {@link #pass}, but returns false when poked or after {@code sliceMillis}, so that the
   * caller can look at what changed meanwhile.
   *
   * @return true once the gate is open
   */
  boolean awaitOpen(long deadlineNanos, long sliceMillis) throws FsException {
    if (!closed) {
      return true;
    }
    NoWait.check(); // a thread that must not wait is never sent here while a switch runs
    synchronized (this) {
      if (closed) {
        long until = Math.max(deadlineNanos, closedAtNanos + LEAST_WAIT_NANOS);
        long left = until - System.nanoTime();
        if (left <= 0) {
          throw new FsException(Errno.EIO, "a switch of lock backend or allocator has run on"
              + " this node since " + java.time.Instant.ofEpochMilli(closedAt)
              + " and the call's wait for it is over");
        }
        try {
          wait(Math.max(1, Math.min(sliceMillis, left / 1_000_000)));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new FsException(Errno.EINTR, "interrupted while a switch runs");
        }
      }
      return !closed;
    }
  }
}

package io.etcfs.lock.etcd.internal;

import static io.etcfs.lock.etcd.internal.LockKeys.mode;

import io.etcfs.spi.lock.LockMode;
import io.etcfs.spi.lock.RecallHandler;
import io.etcfs.spi.meta.KeyValue;
import java.lang.System.Logger.Level;
import java.lang.System.Logger;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Recalls of this node's locks: a conflicting request queued behind a held lock schedules one,
 * no sooner than the minimum hold time after the grant; on a recall thread the recall handler
 * flushes and the lock is released. Owns the recall handler, when a lock counts as idle, and the
 * count of recalls served.
 */
final class Recalls {
  private static final Logger LOG = System.getLogger(EtcdLockService.class.getName());
  /** A holder asked again this long after a recall that has not ended is recalled again. */
  private static final long RECALL_AGAIN_NANOS = TimeUnit.SECONDS.toNanos(5);

  private final Map<Long, Held> held;
  private final Releases releases;
  private final ScheduledExecutorService timer;
  private final ExecutorService recallPool;
  private final long minHoldNanos;
  private final long idleNanos;
  private final long cleanIdleNanos;
  private final AtomicLong recallsServed = new AtomicLong();
  private final RecallCounts recallsByInode = new RecallCounts();
  private volatile RecallHandler recallHandler;

  Recalls(NodeLocks locks, Releases releases, ScheduledExecutorService timer,
      ExecutorService recallPool, long minHoldNanos, long idleNanos, long cleanIdleNanos) {
    this.held = locks.held;
    this.releases = releases;
    this.timer = timer;
    this.recallPool = recallPool;
    this.minHoldNanos = minHoldNanos;
    this.idleNanos = idleNanos;
    this.cleanIdleNanos = cleanIdleNanos;
  }

  void setHandler(RecallHandler handler) {
    recallHandler = Objects.requireNonNull(handler, "handler");
  }

  /** Where recalls go now; null before one is set. */
  RecallHandler handler() {
    return recallHandler;
  }

  /** Recalls served by this node since it started (idle give-backs included). */
  long served() {
    return recallsServed.get();
  }

  /** Recalls served for one inode, while it is among the most recently recalled. */
  long served(long inode) {
    return recallsByInode.of(inode);
  }

  void recallIfWanted(Held h, List<KeyValue> queue) {
    for (KeyValue kv : queue) {
      if (kv.createRevision() > h.lock.fencingToken()
          && mode(kv).conflictsWith(h.lock.mode())) {
        h.waiters.add(kv.createRevision());
        recall(h, mode(kv));
        return;
      }
    }
  }

  /** Delivers a recall once, after the minimum hold time. */
  void recall(Held h, LockMode wanted) {
    long now = System.nanoTime();
    if (h.recalling && !h.idleOnly && now - h.recalledAt < RECALL_AGAIN_NANOS) {
      return;
    }
    if (h.recalling && !h.idleOnly) {
      LOG.log(Level.WARNING, "lock on inode {0} asked for again; recalling it again",
          Long.toHexString(h.lock.inode()));
    }
    // A request that conflicts overtakes an idle give-back still queued: deliver runs once.
    h.idleOnly = false;
    h.recalling = true;
    h.recalledAt = now;
    long delay = Math.max(0, h.grantedAt + minHoldNanos - System.nanoTime());
    timer.schedule(() -> recallPool.execute(() -> deliver(h, wanted)), delay,
        TimeUnit.NANOSECONDS);
  }

  /**
   * A recall: the lock is handed over, whatever the mode wanted. (Answering a reader's recall of
   * a clean exclusive lock by making it shared, as an idle one is, was tried on 2026-12-02 and
   * made CoherenceIT fail 3 runs in 5 — a read of zeros on the other node, a time set there
   * lost — for a cause not found yet; it is not done.)
   */
  private void deliver(Held h, LockMode wanted) {
    if (!claim(h, false)) {
      return;
    }
    try {
      handOver(h, wanted);
    } finally {
      releases.release(h.lock);
    }
  }

  /**
   * Marks {@code h} releasing if it is still to be let go: held, not being released already, and
   * — for a give-back ({@code idle}: only while no real recall took it over) — still idle; a
   * give-back queued for a lock used again meanwhile is called off.
   */
  boolean claim(Held h, boolean idleBatch) {
    synchronized (h) {
      if (held.get(h.lock.inode()) != h || h.releasing || (idleBatch && !h.idleOnly)) {
        return false; // released, being released, or recalled for real: on the recall path
      }
      if (h.idleOnly && !idle(h, System.nanoTime())) {
        h.idleOnly = false; // used again while its give-back was queued: keep it
        h.recalling = false;
        return false;
      }
      h.releasing = true;
      h.batched = idleBatch;
      return true;
    }
  }

  /** The recall handler's flush of a lock being let go, counted; its failure is only logged. */
  void handOver(Held h, LockMode wanted) {
    RecallHandler handler = recallHandler;
    try {
      if (handler != null) {
        handler.recall(h.lock, wanted);
      }
    } catch (RuntimeException e) {
      LOG.log(Level.ERROR, "recall handler failed for inode " + Long.toHexString(h.lock.inode())
          + "; releasing the lock anyway", e);
    } finally {
      recallsServed.incrementAndGet();
      recallsByInode.served(h.lock.inode());
    }
  }

  /** Whether {@code h} has been unused long enough to be given back. */
  boolean idle(Held h, long now) {
    return now - h.lastUsed > (h.clean ? cleanIdleNanos : idleNanos);
  }
}

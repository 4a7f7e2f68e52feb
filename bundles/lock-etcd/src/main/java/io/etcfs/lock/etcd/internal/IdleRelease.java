package io.etcfs.lock.etcd.internal;

import io.etcfs.spi.lock.HeldLock;
import io.etcfs.spi.lock.LockMode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;

/**
 * Locks left unused given back: a periodic sweep ({@link #releaseIdle}) queues them in batches
 * on the idle-release threads; in each batch a clean exclusive lock the core agrees to keep
 * shared is made shared in place ({@link Downgrades}), the rest are handed over and deleted in
 * one transaction. Takes the core's clean hint, which shortens the time to idle.
 */
final class IdleRelease {
  /**
   * The most idle locks one give-back transaction deletes (a compare and a delete each, within
   * etcd's 128 operations): after a {@code tar x} a node gives back thousands of locks, and one
   * transaction per lock was most of the etcd traffic it made.
   */
  static final int GIVE_BACK_MAX = 64;

  private final Map<Long, Held> held;
  private final ExecutorService idleReleases;
  private final Recalls recalls;
  private final Downgrades downgrades;
  private final Releases releases;

  IdleRelease(NodeLocks locks, ExecutorService idleReleases, Recalls recalls,
      Downgrades downgrades, Releases releases) {
    this.held = locks.held;
    this.idleReleases = idleReleases;
    this.recalls = recalls;
    this.downgrades = downgrades;
    this.releases = releases;
  }

  /**
   * The core's hint (lock 3.0): a clean exclusive lock is given back sooner when idle, and may be
   * made shared in place ({@link Downgrades#claimDemote}); a close counts as its last use.
   */
  void clean(HeldLock lock, boolean clean) {
    Held h = held.get(lock.inode());
    if (lock.mode() != LockMode.EXCLUSIVE || h == null || !h.lock.equals(lock)) {
      return;
    }
    synchronized (h) {
      h.clean = clean;
      if (clean) {
        h.lastUsed = System.nanoTime();
      }
    }
  }

  /**
   * Queues every idle lock for a give-back on {@link EtcdLockService#IDLE_RELEASERS} threads, in
   * batches of {@link #GIVE_BACK_MAX}. One that is recalled for real meanwhile is delivered at
   * once, on the recall path.
   */
  void releaseIdle() {
    long now = System.nanoTime();
    List<Held> batch = new ArrayList<>();
    for (Held h : held.values()) {
      if (!h.recalling && recalls.idle(h, now)) {
        h.idleOnly = true;
        h.recalledAt = now;
        h.recalling = true;
        batch.add(h);
        if (batch.size() == GIVE_BACK_MAX) {
          List<Held> full = batch;
          idleReleases.execute(() -> deliverIdle(full));
          batch = new ArrayList<>();
        }
      }
    }
    if (!batch.isEmpty()) {
      List<Held> last = batch;
      idleReleases.execute(() -> deliverIdle(last));
    }
  }

  /**
   * Gives back a batch of idle locks: each one still idle and not being released is marked
   * releasing, its recall handler runs (for an idle lock, normally nothing to flush; the
   * kernel's caches of the file are dropped), and then all are deleted in one transaction.
   */
  private void deliverIdle(List<Held> batch) {
    List<Held> going = new ArrayList<>();
    List<Held> demoting = new ArrayList<>();
    for (Held h : batch) {
      if (recalls.claim(h, true)) {
        (downgrades.claimDemote(h) && downgrades.downgrading(h) ? demoting : going).add(h);
      }
    }
    for (Held h : downgrades.downgrade(demoting)) {
      downgrades.keep(h); // the change did not apply: held exclusively as before, tried again later
    }
    going.forEach(h -> {
      synchronized (h) {
        h.demoting = false;
      }
    });
    if (going.isEmpty()) {
      return;
    }
    try {
      going.forEach(h -> recalls.handOver(h, LockMode.EXCLUSIVE));
    } finally {
      releases.giveBack(going);
    }
  }
}

package io.etcfs.lock.etcd.internal;

import io.etcfs.spi.lock.HeldLock;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One lock this node holds, and how far its recall, give-back or change to shared has got. Its
 * monitor guards the steps of letting it go ({@link Recalls#claim}) and of making it shared.
 */
final class Held {
  final HeldLock lock;
  final Session session;
  final long grantedAt = System.nanoTime();
  volatile long lastUsed = System.nanoTime();
  volatile boolean recalling;
  /** The recall under way is only an idle give-back, queued behind others: see releaseIdle. */
  volatile boolean idleOnly;
  volatile long recalledAt;
  /** The recall was delivered: the lock is on its way out and never handed out again. */
  volatile boolean releasing;
  /** The core says nothing is buffered under it ({@link IdleRelease#clean(HeldLock, boolean)}). */
  volatile boolean clean;
  /**
   * Given back with others in one transaction ({@link Releases#giveBack}), not by {@link
   * Releases#release}.
   */
  volatile boolean batched;
  /**
   * Being made shared in place ({@link Downgrades#downgrade}), which the core agreed to
   * ({@code RecallHandler.downgrading}: it buffers nothing more under the lock) (guarded by this
   * object's monitor).
   */
  volatile boolean demoting;
  /** Conflicting requests (by fencing token) seen queued behind this lock, for the shell. */
  final Set<Long> waiters = ConcurrentHashMap.newKeySet();

  Held(HeldLock lock, Session session) {
    this.lock = lock;
    this.session = session;
  }
}

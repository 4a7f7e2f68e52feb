package io.etcfs.spi.lock;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * Called by a lock service when another node asks for a lock this node holds (lock caching: a
 * holder keeps a lock after use until it is asked). The core then flushes and commits what it
 * wrote under the lock and drops what it cached under it; the service gives the lock back when
 * {@link #recall} returns (a holder still flushing has simply not returned yet), so a handler
 * that fails cannot keep a lock for good.
 *
 * <p>A service may also turn an exclusive lock whose holder committed everything (the core's
 * {@link LockService#clean} hint) into a shared one in place, keeping its fencing token (since 2.6), when it has not
 * been used for a while. The holder keeps
 * what it cached (nothing of the file can change without a recall of the shared lock), and other
 * nodes read without recalling anything. {@link #downgrading} asks first; {@link #downgraded}
 * tells the outcome.
 */
@ConsumerType
public interface RecallHandler {
  void recall(HeldLock lock, LockMode wanted);

  /**
   * The service is about to make exclusive {@code lock} shared: the handler waits for the calls
   * in progress on the file and answers whether nothing of it is buffered. From this call until
   * {@link #downgraded}, the handler buffers nothing more under the lock (a write asks for the
   * lock again: an upgrade), which is what makes the change safe whatever the backend (3.0).
   *
   * @return true to go ahead; false (the default: a handler that does not know) to have the
   *     lock recalled as usual instead
   */
  default boolean downgrading(HeldLock lock) {
    return false;
  }

  /**
   * What became of a lock {@link #downgrading} agreed to give up exclusively: {@code to} is the
   * shared lock now held (same inode, session and fencing token), or {@code from} itself if the
   * change did not happen (the lock is held as before).
   */
  default void downgraded(HeldLock from, HeldLock to) {}
}

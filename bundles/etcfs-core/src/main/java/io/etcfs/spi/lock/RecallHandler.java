package io.etcfs.spi.lock;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * Called by a lock service when another node asks for a lock this node holds (lock caching: a
 * holder keeps a lock after use until it is asked). The core then flushes and commits what it
 * wrote under the lock and drops what it cached under it; the service gives the lock back when
 * {@link #recall} returns (a holder still flushing has simply not returned yet), so a handler
 * that fails cannot keep a lock for good.
 */
@ConsumerType
public interface RecallHandler {
  void recall(HeldLock lock, LockMode wanted);
}

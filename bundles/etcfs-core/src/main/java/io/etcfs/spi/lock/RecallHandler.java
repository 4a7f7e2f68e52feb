package io.etcfs.spi.lock;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * Called by a lock service when another node asks for a lock this node holds (lock caching: a
 * holder keeps a lock after use until it is asked). The core then flushes and commits what it
 * wrote under the lock, drops what it cached under it, and releases it.
 */
@ConsumerType
public interface RecallHandler {
  void recall(HeldLock lock, LockMode wanted);
}

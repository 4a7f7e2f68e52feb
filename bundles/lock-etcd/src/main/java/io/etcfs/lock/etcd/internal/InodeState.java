package io.etcfs.lock.etcd.internal;

import io.etcfs.spi.lock.LockMode;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An inode this node acquires or holds; gone when neither (so memory follows use). Its monitor
 * is the inode's request gate ({@link LockQueue}): one request at a time per inode on this node.
 */
final class InodeState {
  /** The revision of the newest change of the inode's queue the watch has shown. */
  final AtomicLong lastEvent = new AtomicLong();
  /** Acquires in progress (guarded by the map's compute). */
  int users;
  /** The request queued and not granted yet, for the shell: its mode (null: none). */
  volatile LockMode waiting;
  volatile long waitingSince;
  volatile long requestToken;
  /**
   * A {@link Prefetch#prefetchShared} owns the inode's request (guarded by the gate's monitor).
   */
  boolean prefetching;
}

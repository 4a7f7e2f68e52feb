package io.etcfs.lock.etcd.internal;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A number per inode for the {@code capacity} inodes written most recently: a write makes its
 * inode the newest, a read does not; the oldest goes when there are more. Bounded memory for
 * per-inode facts that only matter for a while (recalls served, recent releases). Thread-safe.
 */
final class Recent {
  private final int capacity;
  private final Map<Long, Long> values = new LinkedHashMap<>();
  /** The largest number that went with the oldest inode when there were more. */
  private long forgotten;

  Recent(int capacity) {
    this.capacity = capacity;
  }

  synchronized void put(long inode, long value) {
    values.remove(inode);
    values.put(inode, value);
    if (values.size() > capacity) {
      Long oldest = values.keySet().iterator().next();
      forgotten = Math.max(forgotten, values.remove(oldest));
    }
  }

  /** Adds one to the inode's number (0 if it had none). */
  synchronized void increment(long inode) {
    put(inode, get(inode, 0) + 1);
  }

  synchronized long get(long inode, long absent) {
    Long v = values.get(inode);
    return v == null ? absent : v;
  }

  /** The largest number forgotten so far (for a bound on what is no longer known), or 0. */
  synchronized long forgotten() {
    return forgotten;
  }

  synchronized void remove(long inode) {
    values.remove(inode);
  }
}

package io.etcfs.lock.etcd.internal;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Recalls this node served, per inode, for the shell's {@code locks}: bounded to the
 * {@link #CAPACITY} inodes recalled most recently, so a node that touches millions of inodes
 * keeps a few hundred kilobytes; an inode pushed out starts again from 0.
 */
final class RecallCounts {
  static final int CAPACITY = 4096;

  private final int capacity;
  private final Map<Long, Long> counts;

  RecallCounts() {
    this(CAPACITY);
  }

  RecallCounts(int capacity) {
    this.capacity = capacity;
    this.counts = new LinkedHashMap<>() {
      @Override
      protected boolean removeEldestEntry(Map.Entry<Long, Long> eldest) {
        return size() > RecallCounts.this.capacity;
      }
    };
  }

  /** Counts one recall; the inode becomes the most recent (insertion order, re-inserted). */
  synchronized void served(long inode) {
    Long before = counts.remove(inode);
    counts.put(inode, before == null ? 1 : before + 1);
  }

  /** Read without refreshing the inode's place: a shell listing is no recall. */
  synchronized long of(long inode) {
    Long n = counts.get(inode);
    return n == null ? 0 : n;
  }
}

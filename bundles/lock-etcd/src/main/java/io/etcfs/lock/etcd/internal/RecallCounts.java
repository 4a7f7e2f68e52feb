package io.etcfs.lock.etcd.internal;

/**
 * Recalls this node served, per inode, for the shell's {@code locks}: bounded to the
 * {@link #CAPACITY} inodes recalled most recently, so a node that touches millions of inodes
 * keeps a few hundred kilobytes; an inode pushed out starts again from 0.
 */
final class RecallCounts {
  static final int CAPACITY = 4096;

  private final Recent counts;

  RecallCounts() {
    this(CAPACITY);
  }

  RecallCounts(int capacity) {
    this.counts = new Recent(capacity);
  }

  /** Counts one recall; the inode becomes the most recent. */
  void served(long inode) {
    counts.increment(inode);
  }

  /** Read without refreshing the inode's place: a shell listing is no recall. */
  long of(long inode) {
    return counts.get(inode, 0);
  }
}

package io.etcfs.spi.lock;

/** The two inode lock modes: any number of shared holders, or exactly one exclusive holder. */
public enum LockMode {
  /** Held to read an inode and cache what was read. */
  SHARED,
  /** Held to change an inode and cache what was written. */
  EXCLUSIVE;

  public boolean conflictsWith(LockMode other) {
    return this == EXCLUSIVE || other == EXCLUSIVE;
  }
}

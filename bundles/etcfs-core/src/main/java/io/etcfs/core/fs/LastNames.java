package io.etcfs.core.fs;

import io.etcfs.support.collect.BoundedMaps;
import java.util.Map;

/**
 * The last name under which each recently seen inode was looked up, created or renamed to: the
 * inode record keeps a parent for directories only, so this is how the node can name a file
 * (shell output, {@link InodePathFinder}). Bounded, least recently used first out; never read
 * for a decision, so a stale name costs nothing but a failed check when it is used.
 */
final class LastNames {
  /**
   * The most recent inodes kept. {@link ReadAhead} finds a file's directory here, and a walk
   * names every file of a tree (find's listings, a look-up per entry) long before it opens them
   * (sha256sum after sort): with fewer kept than the tree has files, the first files' names were
   * gone by their opens, each cost a lock round trip of its own, and a 12,000-file sweep took
   * 36 s instead of 8 s once the kernel kept names for 60 s (it no longer looked each file up
   * again at its open). About 10 MB with names of 20-odd bytes, 40 MB with 255-byte ones.
   */
  static final int CAPACITY = 65_536;

  /** One name of an inode: the directory it was seen in and the entry's name there. */
  record Link(long dir, String name) {}

  private final Map<Long, Link> links;

  LastNames() {
    this(CAPACITY);
  }

  LastNames(int capacity) {
    this.links = BoundedMaps.of(capacity, true);
  }

  /** Remembers {@code name} in {@code dir} as the inode's name; "." and ".." are no names. */
  void remember(long ino, long dir, String name) {
    if (name.equals(".") || name.equals("..")) {
      return;
    }
    Link link = new Link(dir, name);
    synchronized (links) {
      links.put(ino, link);
    }
  }

  Link get(long ino) {
    synchronized (links) {
      return links.get(ino);
    }
  }

  int size() {
    synchronized (links) {
      return links.size();
    }
  }
}

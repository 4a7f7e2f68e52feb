package io.etcfs.core.fs;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The last name under which each recently seen inode was looked up, created or renamed to: the
 * inode record keeps a parent for directories only, so this is how the node can name a file
 * (shell output, {@link InodePathFinder}). Bounded, least recently used first out; never read
 * for a decision, so a stale name costs nothing but a failed check when it is used.
 */
final class LastNames {
  /** The most recent inodes kept: a few thousand, about a megabyte even with 255-byte names. */
  static final int CAPACITY = 4096;

  /** One name of an inode: the directory it was seen in and the entry's name there. */
  record Link(long dir, String name) {}

  private final int capacity;
  private final Map<Long, Link> links;

  LastNames() {
    this(CAPACITY);
  }

  LastNames(int capacity) {
    this.capacity = capacity;
    this.links = new LinkedHashMap<>(64, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<Long, Link> eldest) {
        return size() > LastNames.this.capacity;
      }
    };
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

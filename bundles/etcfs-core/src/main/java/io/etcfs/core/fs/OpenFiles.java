package io.etcfs.core.fs;

import java.util.HashMap;
import java.util.Map;

/** The files open on this node: an unlinked file lives on while it is in here. */
final class OpenFiles {
  private final Map<Long, FileData> open = new HashMap<>();
  /** Files whose last name went while open here: their last release purges them. */
  private final java.util.Set<Long> orphaned = new java.util.HashSet<>();

  synchronized FileData acquire(long ino) {
    FileData f = open.computeIfAbsent(ino, FileData::new);
    f.opens++;
    return f;
  }

  /** Returns true if that was the last handle on this node. */
  synchronized boolean release(FileData f) {
    if (--f.opens > 0) {
      return false;
    }
    open.remove(f.ino);
    return true;
  }

  /**
   * After the commit that took the last name of {@code ino}, made while it was open here: true
   * if it still is, and then its last release purges it ({@link #purgeAtRelease}); false if its
   * last release came meanwhile — that release found it still linked, so the caller purges now.
   * Under this object's lock with {@link #release}: one of the two purges, whatever the order.
   */
  synchronized boolean orphanedWhileOpen(long ino) {
    if (!open.containsKey(ino)) {
      return false;
    }
    orphaned.add(ino);
    return true;
  }

  /** At the last release of {@code ino}: whether its last name went while it was open. */
  synchronized boolean purgeAtRelease(long ino) {
    return orphaned.remove(ino);
  }

  /** Whether {@code f}'s release now would be the last handle's on this node. */
  synchronized boolean isLast(FileData f) {
    return f.opens == 1 && open.get(f.ino) == f;
  }

  /** The inodes open here now. */
  synchronized java.util.List<Long> inodes() {
    return java.util.List.copyOf(open.keySet());
  }

  synchronized boolean isOpen(long ino) {
    return open.containsKey(ino);
  }

  synchronized FileData get(long ino) {
    return open.get(ino);
  }

  synchronized java.util.List<FileData> all() {
    return java.util.List.copyOf(open.values());
  }
}

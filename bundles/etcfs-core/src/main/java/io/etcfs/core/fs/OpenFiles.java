package io.etcfs.core.fs;

import java.util.HashMap;
import java.util.Map;

/** The files open on this node: an unlinked file lives on while it is in here. */
final class OpenFiles {
  private final Map<Long, FileData> open = new HashMap<>();

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

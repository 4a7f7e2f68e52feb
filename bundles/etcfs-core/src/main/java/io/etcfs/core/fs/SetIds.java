package io.etcfs.core.fs;

import io.etcfs.core.fs.meta.Inode;
import io.etcfs.spi.vfs.Attr;
import io.etcfs.spi.vfs.Caller;

/**
 * What Linux does to the set-user-ID and set-group-ID bits of a regular file when it changes,
 * in one place: a file must not keep set-ID powers after someone without the privilege to set
 * them (CAP_FSETID; here, anyone but root) rewrote it, truncated it or gave it away. A set-group-ID
 * bit without group-execute is not a privilege (it marks mandatory locking), so it stays unless
 * the caller is outside the file's group. Directories keep theirs: there the bits mean
 * inheritance, not privilege.
 */
final class SetIds {
  private static final int S_IXGRP = 0010;

  private SetIds() {}

  /** The mode after a write or truncate by {@code caller}. */
  static int afterDataChange(Inode i, Caller caller) {
    if (caller.isRoot() || !i.isRegular()) {
      return i.mode();
    }
    return dropSgid(i, caller, i.mode() & ~Attr.S_ISUID);
  }

  /** Whether {@link #afterDataChange} would change anything: the common case costs no write. */
  static boolean dataChangeDrops(Inode i, Caller caller) {
    return afterDataChange(i, caller) != i.mode();
  }

  /** The mode after a change of owner or group: set-user-ID goes even when root asks. */
  static int afterChown(Inode i, Caller caller) {
    if (i.isDir()) {
      return i.mode();
    }
    return dropSgid(i, caller, i.mode() & ~Attr.S_ISUID);
  }

  /** A chmod's mode: a caller outside the file's group cannot make a file set-group-ID. */
  static int chmod(Inode i, int requested, Caller caller) {
    int mode = (i.mode() & Attr.S_IFMT) | (requested & 07777);
    if (!caller.isRoot() && !i.isDir() && !caller.inGroup(i.gid())) {
      mode &= ~Attr.S_ISGID;
    }
    return mode;
  }

  /**
   * The mode of a new inode in {@code parent}: a set-group-ID directory hands its group down,
   * and its set-group-ID bit to subdirectories; a group-executable file created there keeps its
   * set-group-ID bit only for a caller in that group (Linux's mode_strip_sgid).
   */
  static int forNew(Inode parent, int mode, Caller caller) {
    boolean isDir = (mode & Attr.S_IFMT) == Attr.S_IFDIR;
    if ((parent.mode() & Attr.S_ISGID) == 0) {
      return mode;
    }
    if (isDir) {
      return mode | Attr.S_ISGID;
    }
    boolean sgidExec = (mode & (Attr.S_ISGID | S_IXGRP)) == (Attr.S_ISGID | S_IXGRP);
    return sgidExec && !caller.isRoot() && !caller.inGroup(parent.gid())
        ? mode & ~Attr.S_ISGID : mode;
  }

  /**
   * Whether a chmod only takes set-ID bits away. The kernel asks for exactly that, in the
   * caller's name, when someone who does not own the file truncates it (FUSE leaves the clearing
   * to the filesystem); it grants nothing, so it needs no ownership.
   */
  static boolean onlyDrops(Inode i, int requested) {
    int setIds = Attr.S_ISUID | Attr.S_ISGID;
    int kept = i.mode() & 07777;
    return (requested & ~setIds & 07777) == (kept & ~setIds) && (requested & setIds & ~kept) == 0;
  }

  private static int dropSgid(Inode i, Caller caller, int mode) {
    boolean executable = (mode & S_IXGRP) != 0;
    if ((mode & Attr.S_ISGID) != 0 && (executable || !caller.isRoot() && !caller.inGroup(i.gid()))) {
      return mode & ~Attr.S_ISGID;
    }
    return mode;
  }
}

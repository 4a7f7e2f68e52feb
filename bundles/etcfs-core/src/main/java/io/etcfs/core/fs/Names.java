package io.etcfs.core.fs;

import io.etcfs.core.fs.meta.Inode;
import io.etcfs.spi.vfs.Attr;
import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.Vfs;
import java.nio.charset.StandardCharsets;

/** Checks on names and the few permission rules the filesystem enforces itself. */
final class Names {
  private Names() {}

  /** A name that may be created or removed: not ".", "..", empty, with '/' or NUL, or too long. */
  static void checkNew(String name) throws FsException {
    check(name);
    if (name.equals(".") || name.equals("..")) {
      throw new FsException(Errno.EEXIST, "'" + name + "' always exists");
    }
  }

  static void check(String name) throws FsException {
    if (name.isEmpty() || name.indexOf('/') >= 0 || name.indexOf('\0') >= 0) {
      throw new FsException(Errno.EINVAL, "bad name '" + name + "'");
    }
    if (name.getBytes(StandardCharsets.UTF_8).length > Vfs.NAME_MAX) {
      throw new FsException(Errno.ENAMETOOLONG, "name longer than 255 bytes");
    }
  }

  static void requireDir(Inode dir) throws FsException {
    if (!dir.isDir()) {
      throw new FsException(Errno.ENOTDIR, "inode " + dir.ino() + " is not a directory");
    }
  }

  /** In a sticky directory only the owner of the entry or of the directory (or root) may remove it. */
  static void checkSticky(Inode dir, Inode victim, Caller caller) throws FsException {
    if ((dir.mode() & Attr.S_ISVTX) != 0 && !caller.isRoot() && caller.uid() != dir.uid()
        && caller.uid() != victim.uid()) {
      throw new FsException(Errno.EPERM, "sticky directory " + dir.ino() + ": not the owner of "
          + victim.ino());
    }
  }
}

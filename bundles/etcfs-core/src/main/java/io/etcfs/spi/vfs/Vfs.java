package io.etcfs.spi.vfs;

import java.util.List;
import org.osgi.annotation.versioning.ProviderType;

/**
 * The filesystem, addressed by inode number. Names are single path components (no '/', no NUL,
 * at most 255 bytes); the root directory is {@link #ROOT}.
 */
@ProviderType
public interface Vfs {
  long ROOT = 1;
  int NAME_MAX = 255;

  /** Resolves an absolute path ("/", "/a/b") by walking {@link #lookup}. */
  Attr resolve(String path, Caller caller) throws FsException;

  Attr getattr(long ino) throws FsException;

  Attr lookup(long dir, String name, Caller caller) throws FsException;

  Attr mknod(long dir, String name, int mode, long rdev, Caller caller) throws FsException;

  Attr mkdir(long dir, String name, int mode, Caller caller) throws FsException;

  Attr symlink(long dir, String name, String target, Caller caller) throws FsException;

  Attr link(long ino, long dir, String name, Caller caller) throws FsException;

  void unlink(long dir, String name, Caller caller) throws FsException;

  void rmdir(long dir, String name, Caller caller) throws FsException;

  /** Atomic rename, replacing an existing target as POSIX says. */
  void rename(long fromDir, String from, long toDir, String to, Caller caller)
      throws FsException;

  String readlink(long ino) throws FsException;

  Attr setattr(long ino, SetAttr changes, Caller caller) throws FsException;

  /** Entries after {@code cookie} (0: from the start), at most {@code max}. */
  DirPage readdir(long dir, long cookie, int max) throws FsException;

  /** Opens an inode; {@code flags} are open(2) flags (O_TRUNC, O_APPEND honoured here). */
  OpenFile open(long ino, int flags, Caller caller) throws FsException;

  /** Creates and opens a regular file (O_EXCL honoured here). */
  OpenFile create(long dir, String name, int mode, int flags, Caller caller) throws FsException;

  StatFs statfs() throws FsException;

  byte[] getxattr(long ino, String name) throws FsException;

  /** {@code flags}: 0, XATTR_CREATE (1) or XATTR_REPLACE (2). */
  void setxattr(long ino, String name, byte[] value, int flags, Caller caller) throws FsException;

  List<String> listxattr(long ino) throws FsException;

  void removexattr(long ino, String name, Caller caller) throws FsException;
}

package io.etcfs.spi.vfs;

import java.util.List;
import java.util.function.BooleanSupplier;
import org.osgi.annotation.versioning.ProviderType;

/**
 * The filesystem, addressed by inode number. Names are single path components (no '/', no NUL,
 * at most 255 bytes); the root directory is {@link #ROOT}.
 */
@ProviderType
public interface Vfs {
  long ROOT = 1;
  int NAME_MAX = 255;

  /** flock(2) operations, Linux values: shared, exclusive, don't wait (or-ed in), unlock. */
  int LOCK_SH = 1;
  int LOCK_EX = 2;
  int LOCK_NB = 4;
  int LOCK_UN = 8;

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

  /**
   * fcntl F_GETLK: a lock of another owner that conflicts with {@code wanted}, or a lock of type
   * {@link PosixLock.Type#UNLOCK} if none does. Locks are cluster-wide; {@code owner} is the
   * front end's lock owner (unique on this node: the node makes it unique in the cluster).
   */
  PosixLock getlk(long ino, long owner, PosixLock wanted) throws FsException;

  /**
   * fcntl F_SETLK / F_SETLKW: sets or clears {@code lock}'s range for {@code owner}, splitting
   * and merging the owner's ranges as POSIX says. A conflict fails with EAGAIN unless {@code
   * wait}. A wait lasts until the lock is granted; until {@code interrupted} (asked on the calling
   * thread, often) reports that the caller got a signal, then EINTR; or until the implementation's
   * bound, then ENOLCK. A front end that cannot tell passes {@code () -> false}.
   */
  void setlk(long ino, long owner, PosixLock lock, boolean wait, BooleanSupplier interrupted)
      throws FsException;

  /**
   * flock(2): {@code op} is {@link #LOCK_SH}, {@link #LOCK_EX} or {@link #LOCK_UN}, optionally
   * or-ed with {@link #LOCK_NB}. flock locks and POSIX locks never conflict with each other; a
   * conversion between shared and exclusive lets go of the old lock first, as Linux does. A
   * conflict with LOCK_NB fails with EAGAIN (EWOULDBLOCK); a wait ends as for {@link #setlk}.
   */
  void flock(long ino, long owner, int op, BooleanSupplier interrupted) throws FsException;

  /**
   * Registers the front end's kernel cache (1.3): the core tells it what goes stale. {@code
   * null} unregisters it.
   */
  void setKernelCache(KernelCache cache);

  /**
   * The grant under which the kernel may cache {@code ino}'s attributes and data right now
   * (1.3): non-zero while this node holds the inode's lock (shared or exclusive) and is not
   * letting it go, different for every new grant; 0 otherwise. (A grant that continues another
   * without any other node able to write in between keeps its value: the lock a create adopts
   * after it was answered from a directory's queue, see the core's {@code InodeLocks}.) Data
   * the kernel cached under one grant must be dropped before it is used under another (another
   * node may have written in between); attributes may be cached only while it is non-zero, or
   * while {@link #attributesCacheable} says so.
   */
  long cacheGrant(long ino);

  /**
   * A counter that changes whenever attributes the kernel may hold stop being cacheable: a
   * writer elsewhere starts on a file nobody was writing, or a lock of this node goes (1.6). A
   * front end reads it before it computes attributes for a reply and again after the reply: if
   * it changed, the invalidation the core sent meanwhile may have reached the kernel before the
   * reply did (a lookup's reply for an inode the kernel does not know yet is not protected by
   * the kernel's attribute version), so the front end drops those attributes again.
   */
  default long attributesEpoch() {
    return 0;
  }

  /**
   * Whether the kernel may keep {@code ino}'s attributes for its attribute timeout (1.6): while
   * this node holds its lock ({@link #cacheGrant} non-zero), and also without a lock while no
   * other node holds or asks for the file's lock exclusively with changes it has not committed
   * — the core then drops them ({@link KernelCache#lockGoing}) as soon as its lock backend says
   * such a writer comes. Without a backend that says so, only under the lock.
   */
  default boolean attributesCacheable(long ino) {
    return cacheGrant(ino) != 0;
  }
}

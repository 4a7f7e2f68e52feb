package io.etcfs.fuse.common;

import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.PosixLock;

/** {@code struct flock} fields to and from {@link PosixLock}, for both front ends. */
public final class LockRanges {
  /** Lock types as the kernel passes them (asm-generic, x86-64 and arm64). */
  public static final short F_RDLCK = 0;
  public static final short F_WRLCK = 1;
  public static final short F_UNLCK = 2;
  public static final short SEEK_SET = 0;

  private LockRanges() {}

  /**
   * The kernel has already resolved SEEK_CUR / SEEK_END and negative lengths: libfuse hands over
   * SEEK_SET, a start, and a length that is 0 for "to the end". Anything else is refused.
   */
  public static PosixLock toLock(int type, int whence, long start, long len, int pid)
      throws FsException {
    PosixLock.Type t = switch (type) {
      case F_RDLCK -> PosixLock.Type.READ;
      case F_WRLCK -> PosixLock.Type.WRITE;
      case F_UNLCK -> PosixLock.Type.UNLOCK;
      default -> throw new FsException(Errno.EINVAL, "lock type " + type
          + " is not F_RDLCK, F_WRLCK or F_UNLCK");
    };
    if (whence != SEEK_SET) {
      throw new FsException(Errno.EINVAL, "lock whence " + whence + " is not SEEK_SET");
    }
    if (start < 0 || len < 0) {
      throw new FsException(Errno.EINVAL, "lock range start " + start + " length " + len);
    }
    if (len == 0) {
      return new PosixLock(t, start, PosixLock.EOF, pid);
    }
    long end = start + (len - 1);
    if (end < start) {
      throw new FsException(Errno.EOVERFLOW, "lock range start " + start + " length " + len
          + " ends past the largest offset");
    }
    return new PosixLock(t, start, end, pid);
  }

  /** The {@code l_type} of a lock. */
  public static short type(PosixLock lock) {
    return switch (lock.type()) {
      case READ -> F_RDLCK;
      case WRITE -> F_WRLCK;
      case UNLOCK -> F_UNLCK;
    };
  }

  /** The {@code l_len} of a lock: 0 for "to the end of the file". */
  public static long length(PosixLock lock) {
    return lock.end() == PosixLock.EOF ? 0 : lock.end() - lock.start() + 1;
  }
}

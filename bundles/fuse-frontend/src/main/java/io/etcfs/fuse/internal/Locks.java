package io.etcfs.fuse.internal;

import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.OpenFile;
import io.etcfs.spi.vfs.PosixLock;
import io.etcfs.spi.vfs.Vfs;
import java.util.function.BooleanSupplier;
import ru.serce.jnrfuse.struct.Flock;
import ru.serce.jnrfuse.struct.FuseFileInfo;

/**
 * fcntl and flock locks: {@code struct flock} to and from {@link PosixLock}, and the lock owner
 * (the kernel's {@code fi->lock_owner}: one per process for fcntl, one per open file description
 * for flock) passed on as it is; the core makes it unique in the cluster with the node's name.
 */
final class Locks {
  /** fcntl commands and lock types as libfuse passes them (asm-generic, x86-64 and arm64). */
  static final int F_GETLK = 5;
  static final int F_SETLK = 6;
  static final int F_SETLKW = 7;
  static final short F_RDLCK = 0;
  static final short F_WRLCK = 1;
  static final short F_UNLCK = 2;
  static final short SEEK_SET = 0;

  private final Vfs vfs;
  private final Handles handles;
  private final BooleanSupplier interrupted;

  Locks(Vfs vfs, Handles handles, BooleanSupplier interrupted) {
    this.vfs = vfs;
    this.handles = handles;
    this.interrupted = interrupted;
  }

  int lock(FuseFileInfo fi, int cmd, Flock fl) throws FsException {
    long ino = handles.file(fi.fh.get()).ino();
    long owner = fi.lock_owner.get();
    PosixLock lock = toLock(fl.l_type.get(), fl.l_whence.get(), fl.l_start.get(),
        fl.l_len.get(), (int) fl.l_pid.get());
    switch (cmd) {
      case F_GETLK -> fill(vfs.getlk(ino, owner, lock), fl);
      case F_SETLK -> vfs.setlk(ino, owner, lock, false, interrupted);
      case F_SETLKW -> vfs.setlk(ino, owner, lock, true, interrupted);
      default -> throw new FsException(Errno.EINVAL, "lock of inode " + ino + ": unknown command "
          + cmd);
    }
    return 0;
  }

  int flock(FuseFileInfo fi, int op) throws FsException {
    vfs.flock(handles.file(fi.fh.get()).ino(), fi.lock_owner.get(), op, interrupted);
    return 0;
  }

  /**
   * The last close of an open file description that flock-ed: libfuse 2 says so only through the
   * flock_release bit of release(), never with a flock(LOCK_UN).
   */
  void released(OpenFile file, FuseFileInfo fi) throws FsException {
    if (RawFlags.isFlockRelease(fi)) {
      vfs.flock(file.ino(), fi.lock_owner.get(), Vfs.LOCK_UN, () -> false);
    }
  }

  /**
   * The kernel has already resolved SEEK_CUR / SEEK_END and negative lengths: libfuse hands over
   * SEEK_SET, a start, and a length that is 0 for "to the end". Anything else is refused.
   */
  static PosixLock toLock(int type, int whence, long start, long len, int pid)
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

  /** The answer of F_GETLK, written back into the caller's struct flock. */
  static void fill(PosixLock lock, Flock fl) {
    fl.l_type.set(switch (lock.type()) {
      case READ -> F_RDLCK;
      case WRITE -> F_WRLCK;
      case UNLOCK -> F_UNLCK;
    });
    fl.l_whence.set(SEEK_SET);
    fl.l_start.set(lock.start());
    fl.l_len.set(lock.end() == PosixLock.EOF ? 0 : lock.end() - lock.start() + 1);
    fl.l_pid.set(lock.pid());
  }
}

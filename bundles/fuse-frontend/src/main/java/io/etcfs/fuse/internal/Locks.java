package io.etcfs.fuse.internal;

import io.etcfs.fuse.common.Handles;
import io.etcfs.fuse.common.LockRanges;
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

  static PosixLock toLock(int type, int whence, long start, long len, int pid)
      throws FsException {
    return LockRanges.toLock(type, whence, start, len, pid);
  }

  /** The answer of F_GETLK, written back into the caller's struct flock. */
  static void fill(PosixLock lock, Flock fl) {
    fl.l_type.set(LockRanges.type(lock));
    fl.l_whence.set(SEEK_SET);
    fl.l_start.set(lock.start());
    fl.l_len.set(LockRanges.length(lock));
    fl.l_pid.set(lock.pid());
  }
}

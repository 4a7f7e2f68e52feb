package io.etcfs.core.fs;

import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.OpenFile;
import java.nio.ByteBuffer;

/** One open(2) of a file on this node. */
final class Handle implements OpenFile {
  static final int O_ACCMODE = 3;
  static final int O_RDONLY = 0;
  static final int O_WRONLY = 1;
  static final int O_CREAT = 0100;
  static final int O_EXCL = 0200;
  static final int O_TRUNC = 01000;
  static final int O_APPEND = 02000;

  private final Ctx ctx;
  private final FileOps files;
  private final FileData data;
  private final int flags;
  /** Who opened it: the writer whose writes take set-ID bits away. */
  private final Caller opener;
  private boolean released;

  Handle(Ctx ctx, FileOps files, FileData data, int flags, Caller opener) {
    this.ctx = ctx;
    this.files = files;
    this.data = data;
    this.flags = flags;
    this.opener = opener;
  }

  @Override
  public long ino() {
    return data.ino;
  }

  @Override
  public int read(ByteBuffer dst, long offset) throws FsException {
    if ((flags & O_ACCMODE) == O_WRONLY) {
      throw new FsException(Errno.EBADF, "read of a write-only handle");
    }
    return Calls.run(ctx, "read " + data.ino, () -> files.data().read(data, dst, offset));
  }

  @Override
  public int write(ByteBuffer src, long offset) throws FsException {
    if ((flags & O_ACCMODE) == O_RDONLY) {
      throw new FsException(Errno.EBADF, "write to a read-only handle");
    }
    boolean append = (flags & O_APPEND) != 0;
    return Calls.run(ctx, "write " + data.ino, () -> {
      files.beforeWrite(data, opener);
      return files.data().write(data, src, offset, append);
    });
  }

  /** No access check: lseek needs none, so a write-only descriptor may look for holes too. */
  @Override
  public long seek(long offset, boolean hole) throws FsException {
    return Calls.run(ctx, "seek " + data.ino, () -> files.data().seek(data, offset, hole));
  }

  @Override
  public void fallocate(int mode, long offset, long length) throws FsException {
    Calls.run(ctx, "fallocate " + data.ino, () -> {
      if ((flags & O_ACCMODE) == O_RDONLY) {
        throw new FsException(Errno.EBADF, "fallocate of a read-only handle");
      }
      if (mode != (PUNCH_HOLE | KEEP_SIZE) && mode != 0 && mode != KEEP_SIZE) {
        throw new FsException(Errno.EOPNOTSUPP, "fallocate mode " + mode + ": only"
            + " preallocation (0, FALLOC_FL_KEEP_SIZE) and punching holes"
            + " (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE) are supported");
      }
      if (offset < 0 || length <= 0) {
        throw new FsException(Errno.EINVAL, "fallocate of " + length + " bytes at " + offset);
      }
      if (offset > DataPath.MAX_FILE - length) {
        throw new FsException(Errno.EFBIG, "fallocate past the largest file size");
      }
      files.beforeWrite(data, opener); // as for a write: set-ID bits go
      if (mode == (PUNCH_HOLE | KEEP_SIZE)) {
        files.data().punch(data, offset, length);
      } else {
        files.data().preallocate(data, offset, length, mode == KEEP_SIZE);
      }
      return null;
    });
  }

  /**
   * close() of a descriptor: commits nothing, so close(2) does not wait for etcd. The last
   * close's {@link #release} commits (FUSE sends RELEASE after close(2) has returned), and until
   * then another node's stat or read recalls the lock, which commits first: coherence is the
   * recall's, durability fsync's (DESIGN). Reports a commit of this file at an earlier release
   * that failed, once.
   */
  @Override
  public void flush() throws FsException {
    Calls.run(ctx, "flush " + data.ino, () -> files.reportFailedRelease(data));
  }

  @Override
  public void fsync(boolean dataOnly) throws FsException {
    // A flush makes the data durable and commits its metadata before it returns. No clean
    // declaration: a program that fsyncs goes on writing, and each write after one would cost
    // a round trip to withdraw it.
    Calls.run(ctx, "fsync " + data.ino, () -> {
      files.flush(data, false);
      files.reportFailedRelease(data);
    });
  }

  @Override
  public synchronized void release() throws FsException {
    if (released) {
      return;
    }
    released = true;
    Calls.run(ctx, "release " + data.ino, () -> files.release(data));
  }
}

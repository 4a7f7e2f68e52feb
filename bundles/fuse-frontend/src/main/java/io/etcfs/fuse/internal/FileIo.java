package io.etcfs.fuse.internal;

import io.etcfs.fuse.common.Handles;
import io.etcfs.spi.vfs.Attr;
import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.OpenFile;
import io.etcfs.spi.vfs.SetAttr;
import io.etcfs.spi.vfs.Vfs;
import java.nio.ByteBuffer;
import jnr.ffi.Pointer;
import ru.serce.jnrfuse.struct.FileStat;
import ru.serce.jnrfuse.struct.FuseFileInfo;

/**
 * The calls on open files. All of them work from the file handle alone (never the path), so a
 * file unlinked while open is served as before, whatever name libfuse keeps for it.
 */
final class FileIo {
  private final Vfs vfs;
  private final Handles handles;
  private final IoBuffers buffers;
  private final boolean directIo;
  private final Locks locks;

  FileIo(Vfs vfs, Handles handles, IoBuffers buffers, boolean directIo, Locks locks) {
    this.vfs = vfs;
    this.handles = handles;
    this.buffers = buffers;
    this.directIo = directIo;
    this.locks = locks;
  }

  int open(Attr attr, FuseFileInfo fi, Caller caller) throws FsException {
    if (attr.isDirectory()) {
      throw new FsException(Errno.EISDIR, "open of directory inode " + attr.ino());
    }
    return opened(vfs.open(attr.ino(), fi.flags.get(), caller), fi);
  }

  int create(long dir, String name, int mode, FuseFileInfo fi, Caller caller)
      throws FsException {
    return opened(vfs.create(dir, name, mode, fi.flags.get(), caller), fi);
  }

  private int opened(OpenFile file, FuseFileInfo fi) {
    fi.fh.set(handles.add(file));
    if (directIo) {
      // the kernel's page cache would serve this node stale data after another node's write
      RawFlags.setDirectIo(fi);
    }
    return 0;
  }

  int read(FuseFileInfo fi, Pointer buf, long size, long offset) throws FsException {
    OpenFile file = handles.file(fi.fh.get());
    int length = (int) Math.min(size, Integer.MAX_VALUE);
    ByteBuffer dst = buffers.forRead(buf, length);
    int read = file.read(dst, offset);
    if (read < 0 || read > length) {
      throw new FsException(Errno.EIO, "read of inode " + file.ino() + " returned " + read);
    }
    buffers.readDone(buf, dst, read);
    return read;
  }

  int write(FuseFileInfo fi, Pointer buf, long size, long offset) throws FsException {
    OpenFile file = handles.file(fi.fh.get());
    int length = (int) Math.min(size, Integer.MAX_VALUE);
    int written = file.write(buffers.forWrite(buf, length), offset);
    if (written < 0 || written > length) {
      throw new FsException(Errno.EIO, "write of inode " + file.ino() + " returned " + written);
    }
    return written;
  }

  int flush(FuseFileInfo fi) throws FsException {
    handles.file(fi.fh.get()).flush();
    return 0;
  }

  int fsync(FuseFileInfo fi, boolean dataOnly) throws FsException {
    handles.file(fi.fh.get()).fsync(dataOnly);
    return 0;
  }

  /** The last close; it also lets go of the file's flock lock, whatever the release says. */
  int release(FuseFileInfo fi) throws FsException {
    OpenFile file = handles.removeFile(fi.fh.get());
    try {
      file.release();
    } finally {
      locks.released(file, fi);
    }
    return 0;
  }

  int truncate(FuseFileInfo fi, long size, Caller caller) throws FsException {
    vfs.setattr(handles.file(fi.fh.get()).ino(), SetAttr.size(size), caller);
    return 0;
  }

  int getattr(FuseFileInfo fi, FileStat stat) throws FsException {
    StatStructs.fill(vfs.getattr(handles.file(fi.fh.get()).ino()), stat);
    return 0;
  }
}

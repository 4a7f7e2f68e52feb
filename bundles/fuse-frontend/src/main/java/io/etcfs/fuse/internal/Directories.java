package io.etcfs.fuse.internal;

import io.etcfs.fuse.common.Handles;
import io.etcfs.fuse.common.DirHandle;
import io.etcfs.spi.vfs.Attr;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.Vfs;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;
import jnr.ffi.Struct;
import ru.serce.jnrfuse.FuseFillDir;
import ru.serce.jnrfuse.struct.FileStat;

/**
 * opendir / readdir / releasedir. Readdir runs in libfuse's offset mode ({@link DirHandle#list}),
 * so a directory of any size is listed a kernel buffer at a time.
 */
final class Directories {

  private final Vfs vfs;
  private final Handles handles;
  private final ThreadLocal<FileStat> stats;

  Directories(Vfs vfs, Handles handles) {
    this.vfs = vfs;
    this.handles = handles;
    this.stats = ThreadLocal.withInitial(
        () -> FileStat.of(Runtime.getSystemRuntime().getMemoryManager().allocateDirect(256)));
  }

  long open(Attr dir, long parentIno) throws FsException {
    if (!dir.isDirectory()) {
      throw new FsException(Errno.ENOTDIR, "not a directory: inode " + dir.ino());
    }
    return handles.add(new DirHandle(dir.ino(), parentIno));
  }

  int read(long fh, Pointer buf, FuseFillDir filler, long offset) throws FsException {
    handles.dir(fh).list(vfs, offset,
        (name, ino, type, next) -> !fill(filler, buf, name, ino, type, next));
    return 0;
  }

  void release(long fh) {
    handles.removeDir(fh);
  }

  /** Adds one entry; true once the kernel's buffer is full (the entry was not added). */
  private boolean fill(FuseFillDir filler, Pointer buf, String name, long ino, int type, long off) {
    FileStat stat = stats.get();
    stat.st_ino.set(ino);
    stat.st_mode.set(type & Attr.S_IFMT);
    byte[] utf8 = name.getBytes(StandardCharsets.UTF_8);
    byte[] cString = new byte[utf8.length + 1]; // jnr passes the array as is: NUL-terminate it
    System.arraycopy(utf8, 0, cString, 0, utf8.length);
    return filler.apply(buf, ByteBuffer.wrap(cString), Struct.getMemory(stat), off) != 0;
  }
}

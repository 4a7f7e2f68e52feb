package io.etcfs.fuse.internal;

import io.etcfs.fuse.common.Handles;
import io.etcfs.fuse.common.DirHandle;
import io.etcfs.spi.vfs.Attr;
import io.etcfs.spi.vfs.DirEntry;
import io.etcfs.spi.vfs.DirPage;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.Vfs;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;
import jnr.ffi.Struct;
import ru.serce.jnrfuse.FuseFillDir;
import ru.serce.jnrfuse.struct.FileStat;

/**
 * opendir / readdir / releasedir. Readdir runs in libfuse's offset mode: every entry carries the
 * offset to continue after it, so a directory of any size is listed a kernel buffer at a time.
 * Offsets: 0 = from ".", 1 = from "..", 2 = from the first entry (Vfs cookie 0); any other offset
 * is the Vfs cookie of the entry listed last. Entries sharing one cookie (a hash group) all carry
 * the offset from before the group but the last: a listing cut inside a group lists the group
 * again instead of skipping its rest (names sharing a 63-bit hash: practically never). Should a
 * kernel buffer be too small for a whole group, the next call cuts the group rather than loop.
 */
final class Directories {
  private static final long DOT_DONE = 1;
  private static final long DOTDOT_DONE = 2;

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
    DirHandle dir = handles.dir(fh);
    if (offset == 0 && fill(filler, buf, ".", dir.ino, Attr.S_IFDIR, DOT_DONE)) {
      return 0;
    }
    if (offset <= DOT_DONE && fill(filler, buf, "..", dir.parentIno, Attr.S_IFDIR, DOTDOT_DONE)) {
      return 0;
    }
    long start = Math.max(offset, DOTDOT_DONE);
    // a kernel buffer that cannot hold a whole group would get it again forever: cut it instead
    boolean cutGroups = dir.stuckAt == start;
    long resume = start;
    while (true) {
      DirPage page = dir.after(vfs, resume == DOTDOT_DONE ? 0 : resume);
      List<DirEntry> entries = page.entries();
      for (int i = 0; i < entries.size(); i++) {
        DirEntry e = entries.get(i);
        boolean groupGoesOn = i + 1 < entries.size() && entries.get(i + 1).cookie() == e.cookie();
        long next = groupGoesOn && !cutGroups ? resume : e.cookie();
        if (fill(filler, buf, e.name(), e.ino(), e.type(), next)) {
          dir.stuckAt = resume == start ? start : -1;
          return 0;
        }
        resume = next;
      }
      if (!page.more() || entries.isEmpty()) {
        return 0;
      }
    }
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

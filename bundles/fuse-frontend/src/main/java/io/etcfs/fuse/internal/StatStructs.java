package io.etcfs.fuse.internal;

import io.etcfs.spi.vfs.Attr;
import io.etcfs.spi.vfs.StatFs;
import ru.serce.jnrfuse.struct.FileStat;
import ru.serce.jnrfuse.struct.Statvfs;
import ru.serce.jnrfuse.struct.Timespec;

/** Copies the Vfs's attribute records into the C structs libfuse reads. */
final class StatStructs {
  static final int BLOCK_SIZE = 4096;
  private static final long NS = 1_000_000_000L;

  private StatStructs() {}

  static void fill(Attr attr, FileStat stat) {
    stat.st_ino.set(attr.ino());
    stat.st_mode.set(attr.mode());
    stat.st_nlink.set(attr.nlink());
    stat.st_uid.set(attr.uid());
    stat.st_gid.set(attr.gid());
    stat.st_rdev.set(attr.rdev());
    stat.st_size.set(attr.size());
    stat.st_blksize.set(BLOCK_SIZE);
    stat.st_blocks.set(attr.blocks());
    time(stat.st_atim, attr.atimeNs());
    time(stat.st_mtim, attr.mtimeNs());
    time(stat.st_ctim, attr.ctimeNs());
  }

  static void fill(StatFs fs, Statvfs stat) {
    stat.f_bsize.set(fs.blockSize());
    stat.f_frsize.set(fs.blockSize());
    stat.f_blocks.set(fs.totalBlocks());
    stat.f_bfree.set(fs.freeBlocks());
    stat.f_bavail.set(fs.freeBlocks());
    stat.f_files.set(fs.totalInodes());
    stat.f_ffree.set(fs.freeInodes());
    stat.f_favail.set(fs.freeInodes());
    stat.f_namemax.set(fs.maxNameLength());
  }

  private static void time(Timespec spec, long ns) {
    spec.tv_sec.set(Math.floorDiv(ns, NS));
    spec.tv_nsec.set(Math.floorMod(ns, NS));
  }
}

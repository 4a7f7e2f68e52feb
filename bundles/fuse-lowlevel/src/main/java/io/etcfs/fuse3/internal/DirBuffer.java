package io.etcfs.fuse3.internal;

import io.etcfs.spi.vfs.Attr;
import java.nio.charset.StandardCharsets;

/**
 * One readdir or readdirplus reply being filled, laid out as the kernel reads it ({@code struct
 * fuse_dirent} / {@code fuse_direntplus}, linux/fuse.h) until an entry does not fit. Written
 * here rather than by libfuse's fuse_add_direntry[_plus]: jnr-ffi's generated call stubs pass a
 * sixth 64-bit argument wrongly (seen with 2.2.16: the offset arrived as garbage), and laying
 * out an entry costs less than a native call. {@code StructLayoutTest} compares both.
 */
final class DirBuffer {
  /** Where the name starts in struct fuse_dirent. */
  static final int NAME_OFFSET = 24;
  /** sizeof(struct fuse_entry_out). */
  static final int ENTRY_OUT = 128;

  private final long buf;
  private final int size;
  private final boolean plus;
  private final CacheSettings cache;
  private int used;

  DirBuffer(long buf, int size, boolean plus, CacheSettings cache) {
    this.buf = buf;
    this.size = size;
    this.plus = plus;
    this.cache = cache;
  }

  /**
   * Adds one entry continuing at {@code next}; false if it does not fit (nothing added). With
   * {@code withEntry} (readdirplus only) the kernel caches the entry and counts a lookup.
   */
  boolean add(String name, long ino, Attr attr, boolean withEntry, double attrSeconds,
      long next) {
    byte[] utf8 = name.getBytes(StandardCharsets.UTF_8);
    int dirent = NAME_OFFSET + utf8.length;
    int padded = (dirent + 7) & ~7;
    int need = plus ? ENTRY_OUT + padded : padded;
    if (need > size - used) {
      return false;
    }
    long p = buf + used;
    Mem.clear(p, need);
    if (plus) {
      if (withEntry) {
        putEntryOut(p, attr, attrSeconds, cache.entrySeconds());
      } else { // nodeid 0: the kernel lists the name and caches nothing
        Mem.IO.putLong(p + 40, ino);
        Mem.IO.putInt(p + 100, attr.mode() & Attr.S_IFMT);
      }
      p += ENTRY_OUT;
    }
    Mem.IO.putLong(p, ino);
    Mem.IO.putLong(p + 8, next);
    Mem.IO.putInt(p + 16, utf8.length);
    Mem.IO.putInt(p + 20, (attr.mode() & Attr.S_IFMT) >>> 12);
    Mem.IO.putByteArray(p + NAME_OFFSET, utf8, 0, utf8.length);
    used += need;
    return true;
  }

  /** struct fuse_entry_out: what fuse_reply_entry sends, as libfuse's fill_entry makes it. */
  private static void putEntryOut(long p, Attr a, double attrSeconds, double entrySeconds) {
    Mem.IO.putLong(p, a.ino()); // nodeid
    Mem.IO.putLong(p + 16, seconds(entrySeconds));
    Mem.IO.putLong(p + 24, seconds(attrSeconds));
    Mem.IO.putInt(p + 32, nanos(entrySeconds));
    Mem.IO.putInt(p + 36, nanos(attrSeconds));
    long attr = p + 40; // struct fuse_attr
    Mem.IO.putLong(attr, a.ino());
    Mem.IO.putLong(attr + 8, a.size());
    Mem.IO.putLong(attr + 16, a.blocks());
    Mem.IO.putLong(attr + 24, Math.floorDiv(a.atimeNs(), 1_000_000_000L));
    Mem.IO.putLong(attr + 32, Math.floorDiv(a.mtimeNs(), 1_000_000_000L));
    Mem.IO.putLong(attr + 40, Math.floorDiv(a.ctimeNs(), 1_000_000_000L));
    Mem.IO.putInt(attr + 48, (int) Math.floorMod(a.atimeNs(), 1_000_000_000L));
    Mem.IO.putInt(attr + 52, (int) Math.floorMod(a.mtimeNs(), 1_000_000_000L));
    Mem.IO.putInt(attr + 56, (int) Math.floorMod(a.ctimeNs(), 1_000_000_000L));
    Mem.IO.putInt(attr + 60, a.mode());
    Mem.IO.putInt(attr + 64, a.nlink());
    Mem.IO.putInt(attr + 68, a.uid());
    Mem.IO.putInt(attr + 72, a.gid());
    Mem.IO.putInt(attr + 76, (int) a.rdev());
    Mem.IO.putInt(attr + 80, 4096);
  }

  private static long seconds(double t) {
    return t <= 0 ? 0 : (long) t;
  }

  private static int nanos(double t) {
    if (t <= 0) {
      return 0;
    }
    double f = t - (long) t;
    return f >= 0.999999999 ? 999_999_999 : (int) (f * 1.0e9);
  }

  long address() {
    return buf;
  }

  int used() {
    return used;
  }
}

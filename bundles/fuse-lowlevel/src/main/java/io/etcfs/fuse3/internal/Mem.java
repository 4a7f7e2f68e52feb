package io.etcfs.fuse3.internal;

import com.kenai.jffi.MemoryIO;
import io.etcfs.spi.vfs.Attr;
import io.etcfs.spi.vfs.StatFs;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Native memory and the C structures of libfuse 3.14 on x86-64 / arm64 glibc (LP64), by offset.
 * The offsets were read from the headers with offsetof (Debian 12's libfuse3-dev); {@code
 * StructLayoutTest} checks the ones a test can observe.
 */
final class Mem {
  static final MemoryIO IO = MemoryIO.getInstance();

  /** struct fuse_file_info: int flags; a bit-field word; fh at 16; lock_owner at 24. */
  static final int FI_SIZE = 40;
  static final int FI_FLAGS = 0;
  static final int FI_BITS = 4;
  static final int FI_FH = 16;
  static final int FI_LOCK_OWNER = 24;
  static final int FI_WRITEPAGE = 1;
  static final int FI_DIRECT_IO = 1 << 1;
  static final int FI_KEEP_CACHE = 1 << 2;
  static final int FI_FLOCK_RELEASE = 1 << 5;

  /** struct stat (x86-64 glibc, 144 bytes). */
  static final int STAT_SIZE = 144;

  /** struct fuse_entry_param: ino, generation, struct stat attr, attr_timeout, entry_timeout. */
  static final int ENTRY_SIZE = 176;
  static final int ENTRY_ATTR = 16;
  static final int ENTRY_ATTR_TIMEOUT = 160;
  static final int ENTRY_ENTRY_TIMEOUT = 168;

  /** struct fuse_conn_info fields set at init. */
  static final int CONN_MAX_WRITE = 8;
  static final int CONN_MAX_READAHEAD = 16;
  static final int CONN_CAPABLE = 20;
  static final int CONN_WANT = 24;
  static final int CONN_MAX_BACKGROUND = 28;
  static final int CONN_CONGESTION_THRESHOLD = 32;
  static final int CONN_TIME_GRAN = 36;

  /** struct flock: short l_type, short l_whence, off_t l_start, off_t l_len, pid_t l_pid. */
  static final int FLOCK_SIZE = 32;

  /** struct statvfs (glibc, 112 bytes). */
  static final int STATVFS_SIZE = 112;

  private Mem() {}

  static long alloc(long size) {
    long address = IO.allocateMemory(size, true);
    if (address == 0) {
      throw new OutOfMemoryError("cannot allocate " + size + " bytes of native memory");
    }
    return address;
  }

  static long address(ByteBuffer direct) {
    return IO.getDirectBufferAddress(direct);
  }

  /** A NUL-terminated C string as Java text (file names are UTF-8 here, as in the core). */
  static String string(long address) {
    return new String(IO.getZeroTerminatedByteArray(address), StandardCharsets.UTF_8);
  }

  static byte[] bytes(long address, long length) {
    byte[] bytes = new byte[Math.toIntExact(length)];
    if (length > 0) {
      IO.getByteArray(address, bytes, 0, bytes.length);
    }
    return bytes;
  }

  /** Writes {@code text} NUL-terminated at {@code address}; the caller made room for it. */
  static void putString(long address, byte[] utf8) {
    IO.putZeroTerminatedByteArray(address, utf8, 0, utf8.length);
  }

  static void clear(long address, long size) {
    IO.setMemory(address, size, (byte) 0);
  }

  /** Fills a struct stat from an inode's attributes. */
  static void putStat(long st, Attr a) {
    clear(st, STAT_SIZE);
    IO.putLong(st + 8, a.ino());
    IO.putLong(st + 16, a.nlink());
    IO.putInt(st + 24, a.mode());
    IO.putInt(st + 28, a.uid());
    IO.putInt(st + 32, a.gid());
    IO.putLong(st + 40, a.rdev());
    IO.putLong(st + 48, a.size());
    IO.putLong(st + 56, 4096);
    IO.putLong(st + 64, a.blocks());
    putTime(st + 72, a.atimeNs());
    putTime(st + 88, a.mtimeNs());
    putTime(st + 104, a.ctimeNs());
  }

  /** A struct stat carrying only an inode number and a file type (readdir). */
  static void putTypeOnly(long st, long ino, int mode) {
    clear(st, STAT_SIZE);
    IO.putLong(st + 8, ino);
    IO.putInt(st + 24, mode & Attr.S_IFMT);
  }

  private static void putTime(long timespec, long ns) {
    IO.putLong(timespec, Math.floorDiv(ns, 1_000_000_000L));
    IO.putLong(timespec + 8, Math.floorMod(ns, 1_000_000_000L));
  }

  /** Nanoseconds since the epoch from a struct timespec. */
  static long getTime(long timespec) {
    return IO.getLong(timespec) * 1_000_000_000L + IO.getLong(timespec + 8);
  }

  /**
   * Fills a fuse_entry_param: {@code nodeId} 0 with a stat carrying only the inode number tells
   * the kernel "no entry to cache" (readdirplus's "." and "..").
   */
  static void putEntry(long e, long nodeId, Attr a, double attrTimeout, double entryTimeout) {
    IO.putLong(e, nodeId);
    IO.putLong(e + 8, 0); // generation: etcfs never reuses an inode number
    putStat(e + ENTRY_ATTR, a);
    IO.putDouble(e + ENTRY_ATTR_TIMEOUT, attrTimeout);
    IO.putDouble(e + ENTRY_ENTRY_TIMEOUT, entryTimeout);
  }

  static void putStatvfs(long s, StatFs fs) {
    clear(s, STATVFS_SIZE);
    IO.putLong(s, fs.blockSize());
    IO.putLong(s + 8, fs.blockSize());
    IO.putLong(s + 16, fs.totalBlocks());
    IO.putLong(s + 24, fs.freeBlocks());
    IO.putLong(s + 32, fs.freeBlocks());
    IO.putLong(s + 40, fs.totalInodes());
    IO.putLong(s + 48, fs.freeInodes());
    IO.putLong(s + 56, fs.freeInodes());
    IO.putLong(s + 80, fs.maxNameLength());
  }
}

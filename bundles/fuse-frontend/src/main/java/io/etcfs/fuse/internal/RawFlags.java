package io.etcfs.fuse.internal;

import jnr.ffi.Pointer;
import jnr.ffi.Struct;
import ru.serce.jnrfuse.struct.FuseFileInfo;
import ru.serce.jnrfuse.struct.FuseOperations;

/**
 * The bit fields of libfuse 2.9's structs that jnr-fuse declares but cannot write (it maps each
 * one-bit field to a padding member). They are set through the structs' raw memory. Offsets are
 * those of the x86-64 / arm64 LP64 ABI: {@code struct fuse_file_info} is {@code int flags; unsigned
 * long fh_old; int writepage;} then the bit word at 20; {@code struct fuse_operations} has 38
 * function pointers (getattr .. bmap) before its flag word at 304. {@code RawFlagsTest} checks both
 * against jnr-fuse's own layout and, through real mounts, against libfuse's behaviour.
 */
final class RawFlags {
  static final int FILE_INFO_BITS_OFFSET = 20;
  static final int DIRECT_IO = 1;
  static final int KEEP_CACHE = 1 << 1;
  static final int FLOCK_RELEASE = 1 << 4;

  static final int OPERATIONS_FLAGS_OFFSET = 304;
  static final int NULLPATH_OK = 1;
  static final int NOPATH = 1 << 1;
  static final int UTIME_OMIT_OK = 1 << 2;

  private RawFlags() {}

  static void setDirectIo(FuseFileInfo fi) {
    Pointer memory = Struct.getMemory(fi);
    memory.putInt(FILE_INFO_BITS_OFFSET, memory.getInt(FILE_INFO_BITS_OFFSET) | DIRECT_IO);
  }

  static boolean isFlockRelease(FuseFileInfo fi) {
    return (Struct.getMemory(fi).getInt(FILE_INFO_BITS_OFFSET) & FLOCK_RELEASE) != 0;
  }

  /**
   * nullpath_ok: the calls on a file handle need no path, so libfuse must not fail them with
   * ENOENT where it has lost a file's path.
   * utime_omit_ok: without it libfuse 2 drops a utimens that sets only one of the two times.
   */
  static void setOperationFlags(FuseOperations operations, int flags) {
    Pointer memory = Struct.getMemory(operations);
    memory.putInt(OPERATIONS_FLAGS_OFFSET, memory.getInt(OPERATIONS_FLAGS_OFFSET) | flags);
  }
}

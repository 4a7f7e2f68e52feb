package io.etcfs.fuse.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jnr.ffi.Memory;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;
import jnr.ffi.Struct;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import ru.serce.jnrfuse.struct.FuseFileInfo;
import ru.serce.jnrfuse.struct.FuseOperations;

/**
 * The raw bit-field offsets against libfuse 2.9's struct layout (LP64). jnr-fuse's own members
 * around each bit word pin where the word is; that the bits mean what we think is shown by real
 * mounts in FuseOperationsTest: direct_io (reads bypass the page cache), nullpath_ok (an
 * unlinked open file still works), utime_omit_ok (touch -m leaves atime).
 */
@Timeout(30)
class RawFlagsTest {
  private static final Runtime RUNTIME = Runtime.getSystemRuntime();

  @Test
  void fileInfoBitWordSitsBetweenWritepageAndFh() {
    FuseFileInfo fi = FuseFileInfo.of(Memory.allocateDirect(RUNTIME, 64));
    assertEquals(40, Struct.size(fi), "sizeof(struct fuse_file_info)");
    assertEquals(0, fi.flags.offset());
    assertEquals(8, fi.fh_old.offset());
    // int writepage at 16, then the unsigned bit word, then uint64_t fh at 24
    assertEquals(RawFlags.FILE_INFO_BITS_OFFSET + 4, fi.fh.offset());
    assertEquals(32, fi.lock_owner.offset());
  }

  @Test
  void directIoSetsBitZeroOnlyAndKeepsTheOtherBits() {
    Pointer memory = Memory.allocateDirect(RUNTIME, 64);
    FuseFileInfo fi = FuseFileInfo.of(memory);
    fi.fh.set(0x1122334455667788L);
    memory.putInt(RawFlags.FILE_INFO_BITS_OFFSET, RawFlags.FLOCK_RELEASE);
    assertTrue(RawFlags.isFlockRelease(fi));
    RawFlags.setDirectIo(fi);
    assertEquals(RawFlags.FLOCK_RELEASE | 1, memory.getInt(RawFlags.FILE_INFO_BITS_OFFSET));
    assertEquals(0x1122334455667788L, fi.fh.get(), "fh untouched");
    assertEquals(0, memory.getInt(16), "writepage untouched");
  }

  @Test
  void operationsFlagWordFollowsTheThirtyEightLibfuse28Callbacks() {
    FuseOperations ops = new FuseOperations(RUNTIME);
    assertEquals(0, ops.getattr.offset());
    assertEquals(37 * 8, ops.bmap.offset(), "bmap is the 38th pointer");
    assertEquals(RawFlags.OPERATIONS_FLAGS_OFFSET, ops.bmap.offset() + 8);
    assertEquals(RawFlags.OPERATIONS_FLAGS_OFFSET + 8, ops.ioctl.offset(), "ioctl after the word");
    assertEquals(360, Struct.size(ops), "sizeof(struct fuse_operations) in libfuse 2.9");
  }

  @Test
  void operationFlagsAreOredIntoTheWordWithoutTouchingCallbacks() {
    FuseOperations ops = new FuseOperations(RUNTIME);
    Pointer memory = Struct.getMemory(ops);
    long bmap = memory.getLong(ops.bmap.offset());
    long ioctl = memory.getLong(ops.ioctl.offset());
    RawFlags.setOperationFlags(ops, RawFlags.NULLPATH_OK);
    RawFlags.setOperationFlags(ops, RawFlags.UTIME_OMIT_OK);
    assertEquals(RawFlags.NULLPATH_OK | RawFlags.UTIME_OMIT_OK,
        memory.getInt(RawFlags.OPERATIONS_FLAGS_OFFSET));
    assertFalse((memory.getInt(RawFlags.OPERATIONS_FLAGS_OFFSET) & RawFlags.NOPATH) != 0);
    assertEquals(bmap, memory.getLong(ops.bmap.offset()));
    assertEquals(ioctl, memory.getLong(ops.ioctl.offset()));
  }
}

package io.etcfs.core.fs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.OpenFile;
import io.etcfs.spi.vfs.Vfs;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * fallocate(PUNCH_HOLE | KEEP_SIZE) ({@link OpenFile#fallocate}): the range reads as zeros here
 * and on another node, its whole blocks go back to the allocator and read as a hole, the size
 * stays; what was only buffered is punched too. Preallocation (mode 0, KEEP_SIZE inside the
 * size) maps the holes of the range to zeroed blocks, durably, and keeps every byte of data;
 * other modes are EOPNOTSUPP.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PunchHoleTest {
  static final Caller ROOT = Caller.ROOT;
  static final int RDONLY = 0;
  static final int RDWR = 2;
  static final int BS = 4096;
  static final int PUNCH = OpenFile.PUNCH_HOLE | OpenFile.KEEP_SIZE;

  @TempDir Path dir;
  FsFixture fx;
  FsFixture.Node a;
  FsFixture.Node b;

  @BeforeEach
  void setUp() throws Exception {
    fx = new FsFixture(dir, 0);
    a = fx.node("a");
    b = fx.node("b");
  }

  @AfterEach
  void tearDown() throws Exception {
    a.fs.close();
    b.fs.close();
    fx.close();
  }

  @Test
  void aPunchedRangeReadsAsZerosEverywhereAndItsBlocksAreFreed() throws Exception {
    byte[] content = pattern(10 * BS);
    OpenFile f = a.fs.create(Vfs.ROOT, "punched", 0644, RDWR, ROOT);
    f.write(ByteBuffer.wrap(content), 0);
    f.fsync(false);
    long free = fx.allocator.freeBlocks();
    f.fallocate(PUNCH, BS + BS / 2, 6 * BS); // blocks 2..6 whole, halves of 1 and 7
    Arrays.fill(content, BS + BS / 2, 7 * BS + BS / 2, (byte) 0);
    assertArrayEquals(content, read(f, content.length));
    assertEquals(10L * BS, a.fs.getattr(f.ino()).size(), "the size stays");
    assertEquals(2L * BS, f.seek(0, true), "the first hole");
    assertEquals(7L * BS, f.seek(2 * BS, false), "data again at block 7");
    f.fsync(false);
    // five blocks freed; blocks 1 and 7 each went to a fresh block (allocate-on-write)
    assertEquals(free + 5, fx.allocator.freeBlocks());
    OpenFile r = b.fs.open(f.ino(), RDONLY, ROOT);
    assertArrayEquals(content, read(r, content.length), "another node reads the hole");
    r.release();
    f.release();
  }

  @Test
  void whatIsOnlyBufferedIsPunchedToo() throws Exception {
    byte[] content = pattern(4 * BS);
    OpenFile f = a.fs.create(Vfs.ROOT, "buffered", 0644, RDWR, ROOT);
    f.write(ByteBuffer.wrap(content), 0);
    f.fallocate(PUNCH, 100, 3 * BS); // inside block 0 to inside block 3
    Arrays.fill(content, 100, 3 * BS + 100, (byte) 0);
    assertArrayEquals(content, read(f, content.length));
    f.release();
    OpenFile r = b.fs.open(f.ino(), RDONLY, ROOT);
    assertArrayEquals(content, read(r, content.length));
    r.release();
  }

  /** A hole across many extents is removed in bounded transactions, each a valid file. */
  @Test
  void aHoleAcrossManyExtentsIsPunchedInSteps() throws Exception {
    OpenFile f = a.fs.create(Vfs.ROOT, "fragmented", 0644, RDWR, ROOT);
    int pieces = 3 * Purger.STEP_EXTENTS;
    for (int i = 0; i < pieces; i++) { // every other block, committed one by one
      f.write(ByteBuffer.wrap(pattern(BS)), 2L * i * BS);
      f.fsync(false);
    }
    long free = fx.allocator.freeBlocks();
    f.fallocate(PUNCH, 0, 2L * pieces * BS);
    f.fsync(false);
    assertEquals(free + pieces, fx.allocator.freeBlocks());
    FsException e = assertThrows(FsException.class, () -> f.seek(0, false));
    assertEquals(Errno.ENXIO, e.errno(), "no data left");
    f.release();
  }

  @Test
  void pastTheEndNothingChangesAndBadRequestsAreRefused() throws Exception {
    byte[] content = pattern(2 * BS);
    OpenFile f = a.fs.create(Vfs.ROOT, "small", 0644, RDWR, ROOT);
    f.write(ByteBuffer.wrap(content), 0);
    f.fsync(false);
    f.fallocate(PUNCH, 2 * BS, 10 * BS);
    assertArrayEquals(content, read(f, content.length));
    assertEquals(2L * BS, a.fs.getattr(f.ino()).size());
    assertErrno(Errno.EOPNOTSUPP, () -> f.fallocate(OpenFile.KEEP_SIZE, BS, 2 * BS));
    assertErrno(Errno.EOPNOTSUPP, () -> f.fallocate(OpenFile.PUNCH_HOLE, 0, BS));
    assertErrno(Errno.EOPNOTSUPP, () -> f.fallocate(0x10, 0, BS)); // FALLOC_FL_ZERO_RANGE
    assertErrno(Errno.EOPNOTSUPP, () -> f.fallocate(0x08, 0, BS)); // FALLOC_FL_COLLAPSE_RANGE
    assertErrno(Errno.EINVAL, () -> f.fallocate(PUNCH, -1, BS));
    assertErrno(Errno.EINVAL, () -> f.fallocate(PUNCH, 0, 0));
    assertErrno(Errno.EFBIG, () -> f.fallocate(PUNCH, Long.MAX_VALUE - 10, 100));
    OpenFile ro = a.fs.open(f.ino(), RDONLY, ROOT);
    assertErrno(Errno.EBADF, () -> ro.fallocate(PUNCH, 0, BS));
    ro.release();
    assertArrayEquals(content, read(f, content.length), "nothing changed by the refusals");
    f.release();
  }

  @Test
  void preallocationMapsTheHolesToZeroedBlocksAndKeepsTheData() throws Exception {
    byte[] head = pattern(BS + 100);
    OpenFile f = a.fs.create(Vfs.ROOT, "pre", 0644, RDWR, ROOT);
    f.write(ByteBuffer.wrap(head), 0);
    f.fsync(false);
    long free = fx.allocator.freeBlocks();
    f.fallocate(0, 100, 64L * BS); // over data, its last block's tail and 63 holes
    assertEquals(100 + 64L * BS, a.fs.getattr(f.ino()).size());
    assertEquals(free - 63, fx.allocator.freeBlocks(), "63 blocks set aside, durably");
    assertEquals(65L * BS / 512, a.fs.getattr(f.ino()).blocks());
    byte[] expect = new byte[100 + 64 * BS];
    System.arraycopy(head, 0, expect, 0, head.length);
    assertArrayEquals(expect, read(f, expect.length), "data kept, the rest zeros");
    assertEquals(0, f.seek(0, false));
    assertEquals(expect.length, f.seek(0, true), "no hole left in the range");
    f.release();
    OpenFile there = b.fs.open(f.ino(), RDONLY, ROOT);
    assertEquals(expect.length, b.fs.getattr(f.ino()).size(), "committed: another node sees it");
    assertArrayEquals(expect, read(there, expect.length));
    there.release();
  }

  @Test
  void keepSizePreallocatesTheHolesOfASparseFileAndMovesNoSize() throws Exception {
    OpenFile f = a.fs.create(Vfs.ROOT, "sparse", 0644, RDWR, ROOT);
    f.write(ByteBuffer.wrap(pattern(10)), 20L * BS - 10); // 19 blocks of hole, then data
    f.fsync(false);
    long free = fx.allocator.freeBlocks();
    f.fallocate(OpenFile.KEEP_SIZE, 0, 20L * BS);
    assertEquals(20L * BS, a.fs.getattr(f.ino()).size());
    assertEquals(free - 19, fx.allocator.freeBlocks());
    assertEquals(20L * BS, f.seek(0, true), "no hole left");
    byte[] expect = new byte[20 * BS];
    System.arraycopy(pattern(10), 0, expect, 20 * BS - 10, 10);
    assertArrayEquals(expect, read(f, expect.length));
    f.release();
  }

  @Test
  void preallocationPastTheFreeSpaceIsEnospcAndKeepsTheFileWhole() throws Exception {
    OpenFile f = a.fs.create(Vfs.ROOT, "big", 0644, RDWR, ROOT);
    long total = fx.allocator.freeBlocks();
    assertErrno(Errno.ENOSPC, () -> f.fallocate(0, 0, (total + 10) * BS));
    long size = a.fs.getattr(f.ino()).size();
    assertTrue(size < (total + 10) * BS, "the size reached only what had room: " + size);
    assertEquals(size, b.fs.getattr(f.ino()).size(), "what was set aside is committed");
    byte[] zeros = new byte[(int) Math.min(size, 64 * BS)];
    assertArrayEquals(zeros, DataPathTest.read(f, 0, zeros.length));
    f.release();
    a.fs.unlink(Vfs.ROOT, "big", ROOT);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (fx.allocator.freeBlocks() != total && System.nanoTime() < deadline) {
      Thread.sleep(10); // a poll: the purge of an unlinked file may finish after unlink returns
    }
    assertEquals(total, fx.allocator.freeBlocks(), "every block comes back with the file");
  }

  private interface Call {
    void run() throws FsException;
  }

  private static void assertErrno(int errno, Call call) {
    FsException e = assertThrows(FsException.class, call::run);
    assertEquals(errno, e.errno(), e.getMessage());
    assertTrue(e.getMessage() != null && !e.getMessage().isBlank());
  }

  private static byte[] read(OpenFile f, int len) throws FsException {
    ByteBuffer buf = ByteBuffer.allocate(len + 1);
    int n = f.read(buf, 0);
    assertEquals(len, n);
    return Arrays.copyOf(buf.array(), n);
  }

  private static byte[] pattern(int len) {
    byte[] b = new byte[len];
    for (int i = 0; i < len; i++) {
      b[i] = (byte) (1 + i % 251);
    }
    return b;
  }
}

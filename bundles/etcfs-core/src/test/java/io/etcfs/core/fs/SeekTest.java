package io.etcfs.core.fs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.OpenFile;
import io.etcfs.spi.vfs.SetAttr;
import io.etcfs.spi.vfs.Vfs;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * lseek(2)'s SEEK_DATA and SEEK_HOLE ({@link OpenFile#seek}): answered from the committed
 * extent map and the node's buffer, whole blocks at a time, and on another node after a recall
 * of the writer's lock, as a read is.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SeekTest {
  static final Caller ROOT = Caller.ROOT;
  static final int RDONLY = 0;
  static final int WRONLY = 1;
  static final int RDWR = 2;
  static final int BS = 4096;
  static final long MIB = 1 << 20;
  /** The sparse file of the tests: a block at 0 and one at 1 MiB. */
  static final long SIZE = MIB + BS;
  static final boolean DATA = false;
  static final boolean HOLE = true;

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
  void committedSparseFile() throws Exception {
    OpenFile f = a.fs.create(Vfs.ROOT, "sparse", 0644, RDWR, ROOT);
    writeSparse(f);
    f.fsync(false);
    assertFalse(extentsEmpty(f.ino()), "committed");
    assertSparseAnswers(f);
    // grown by truncate: the new end is a hole, and no data follows the second block
    a.fs.setattr(f.ino(), size(3 * MIB), ROOT);
    assertEquals(SIZE, f.seek(SIZE, HOLE));
    assertEquals(2 * MIB, f.seek(2 * MIB, HOLE));
    assertEquals(SIZE, f.seek(MIB, HOLE));
    assertEnxio(() -> f.seek(SIZE, DATA));
    assertEnxio(() -> f.seek(3 * MIB - 1, DATA));
    assertEquals(3 * MIB - 1, f.seek(3 * MIB - 1, HOLE));
    assertEnxio(() -> f.seek(3 * MIB, HOLE));
    f.release();

    // reopened: the same answers from the map alone
    OpenFile r = a.fs.open(f.ino(), RDONLY, ROOT);
    assertEquals(MIB, r.seek(BS, DATA));
    assertEquals(SIZE, r.seek(MIB, HOLE));
    r.release();
  }

  @Test
  void bufferedSparseFile() throws Exception {
    OpenFile f = a.fs.create(Vfs.ROOT, "buffered", 0644, RDWR, ROOT);
    writeSparse(f);
    assertTrue(extentsEmpty(f.ino()), "nothing committed yet");
    assertSparseAnswers(f);
    assertTrue(extentsEmpty(f.ino()), "a seek commits nothing on the writer's node");
    f.release();
  }

  /** Committed and buffered blocks side by side make one run of data. */
  @Test
  void bufferedBlocksNextToCommittedOnesAreOneRun() throws Exception {
    OpenFile f = a.fs.create(Vfs.ROOT, "mixed", 0644, RDWR, ROOT);
    write(f, 0, BS);
    f.fsync(false);
    write(f, BS + 10, 20); // block 1, buffered
    write(f, 3 * BS, BS); // block 3, buffered: block 2 stays a hole
    assertEquals(2 * BS, f.seek(0, HOLE));
    assertEquals(BS + 5, f.seek(BS + 5, DATA), "a partly written block is all data");
    assertEquals(3 * BS, f.seek(2 * BS, DATA));
    assertEquals(4 * BS, f.seek(3 * BS, HOLE), "the end");
    f.release();
  }

  /** lseek needs no read access: a write-only descriptor may seek, though it may not read. */
  @Test
  void aWriteOnlyFileMaySeek() throws Exception {
    OpenFile f = a.fs.create(Vfs.ROOT, "wo", 0644, WRONLY, ROOT);
    writeSparse(f);
    assertEquals(Errno.EBADF,
        assertThrows(FsException.class, () -> f.read(ByteBuffer.allocate(1), 0)).errno());
    assertEquals(MIB, f.seek(BS, DATA));
    assertEquals(BS, f.seek(0, HOLE));
    f.release();
  }

  /**
   * The other node's seek takes the shared lock and so recalls the writer's: what the writer
   * buffered is committed first and the answer includes it. The reader opens first, so its
   * open's own recall is over before the writes.
   */
  @Test
  void anotherNodeSeesTheWritersBufferedLayout() throws Exception {
    OpenFile w = a.fs.create(Vfs.ROOT, "shared", 0644, RDWR, ROOT);
    OpenFile r = b.fs.open(w.ino(), RDONLY, ROOT);
    writeSparse(w); // takes a's exclusive lock back from b's shared one
    assertTrue(extentsEmpty(w.ino()), "buffered on a");
    assertEquals(MIB, r.seek(BS, DATA));
    assertFalse(extentsEmpty(w.ino()), "b's seek recalled a's lock: a committed");
    assertSparseAnswers(r);
    write(w, 2 * MIB, BS); // buffered on a again
    assertEquals(2 * MIB, r.seek(SIZE, DATA));
    assertEquals(2 * MIB + BS, r.seek(2 * MIB, HOLE));
    r.release();
    w.release();
  }

  /**
   * Random writes, truncations and flushes against a model of the blocks written: every
   * written block is data, every other block below the size a hole.
   */
  @Test
  void answersMatchTheBlocksWritten() throws Exception {
    Random rnd = new Random(7);
    OpenFile f = a.fs.create(Vfs.ROOT, "random", 0644, RDWR, ROOT);
    BitSet written = new BitSet();
    long size = 0;
    for (int round = 0; round < 60; round++) {
      int op = rnd.nextInt(10);
      if (op < 7) {
        long at = rnd.nextInt(64 * BS);
        int len = 1 + rnd.nextInt(3 * BS);
        write(f, at, len);
        written.set((int) (at / BS), (int) ((at + len - 1) / BS) + 1);
        size = Math.max(size, at + len);
      } else if (op < 9) {
        size = rnd.nextInt(70 * BS);
        a.fs.setattr(f.ino(), size(size), ROOT);
        written.clear((int) ((size + BS - 1) / BS), Integer.MAX_VALUE);
      } else {
        f.fsync(false);
      }
      for (long off = 0; off <= size + BS; off += 1 + rnd.nextInt(BS)) {
        String where = "round " + round + ", offset " + off + ", size " + size;
        assertEquals(model(written, size, off, DATA), answer(f, off, DATA), "data at " + where);
        assertEquals(model(written, size, off, HOLE), answer(f, off, HOLE), "hole at " + where);
      }
    }
    f.release();
  }

  /** SEEK_DATA or SEEK_HOLE as the model has it; -1 for ENXIO. */
  private static long model(BitSet written, long size, long off, boolean hole) {
    if (off >= size) {
      return -1;
    }
    int blk = (int) (off / BS);
    if (hole) {
      return Math.min(size, Math.max(off, (long) written.nextClearBit(blk) * BS));
    }
    int data = written.nextSetBit(blk);
    return data < 0 || (long) data * BS >= size ? -1 : Math.max(off, (long) data * BS);
  }

  private static long answer(OpenFile f, long off, boolean hole) throws FsException {
    try {
      return f.seek(off, hole);
    } catch (FsException e) {
      assertEquals(Errno.ENXIO, e.errno(), e.getMessage());
      return -1;
    }
  }

  /** A block of data at 0 and one at 1 MiB, a hole between. */
  private static void writeSparse(OpenFile f) throws FsException {
    write(f, 0, BS);
    write(f, MIB, BS);
  }

  private static void assertSparseAnswers(OpenFile f) throws FsException {
    assertEquals(0, f.seek(0, DATA));
    assertEquals(BS, f.seek(0, HOLE));
    assertEquals(100, f.seek(100, DATA));
    assertEquals(BS, f.seek(100, HOLE));
    assertEquals(MIB, f.seek(BS, DATA), "from the start of the hole");
    assertEquals(MIB, f.seek(5000, DATA), "from inside the hole");
    assertEquals(5000, f.seek(5000, HOLE));
    assertEquals(MIB, f.seek(MIB, DATA), "at the second block");
    assertEquals(MIB + 10, f.seek(MIB + 10, DATA));
    assertEquals(SIZE, f.seek(MIB, HOLE), "the end counts as a hole");
    assertEquals(SIZE - 1, f.seek(SIZE - 1, DATA));
    assertEnxio(() -> f.seek(SIZE, DATA));
    assertEnxio(() -> f.seek(SIZE, HOLE));
    assertEnxio(() -> f.seek(SIZE + 1, DATA));
    assertEnxio(() -> f.seek(-1, DATA));
  }

  private static void assertEnxio(org.junit.jupiter.api.function.Executable seek) {
    assertEquals(Errno.ENXIO, assertThrows(FsException.class, seek).errno());
  }

  private static void write(OpenFile f, long at, int len) throws FsException {
    byte[] data = new byte[len];
    Arrays.fill(data, (byte) 'x');
    assertEquals(len, f.write(ByteBuffer.wrap(data), at));
  }

  private static SetAttr size(long size) {
    return new SetAttr(null, null, null, size, null, null);
  }

  private boolean extentsEmpty(long ino) {
    return fx.store.prefix(fx.keys.extentPrefix(ino), 0).kvs().isEmpty();
  }
}

package io.etcfs.core.fs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.core.fs.meta.FileExtent;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.Txn;
import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.OpenFile;
import io.etcfs.spi.vfs.SetAttr;
import io.etcfs.spi.vfs.Vfs;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Overwrites in place: a dirty block that the committed map already gives the file, on device
 * blocks the allocator permits, is written over them; the extent map and the allocation stay as
 * they were and the commit carries only the size and times. Without a permit the same writes go
 * to fresh blocks, as before.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class InPlaceTest {
  static final Caller ROOT = Caller.ROOT;
  static final int RDWR = 2;
  static final long SMALL = WriteAheadTest.SMALL;

  @TempDir Path dir;
  FsFixture fx;
  EtcFs fs;
  WriteAheadTest committed = new WriteAheadTest();

  void start(boolean inPlace) throws Exception {
    fx = new FsFixture(dir, 0);
    fx.allocator.inPlace = inPlace;
    fs = fx.node("n1", SMALL).fs;
    committed.fx = fx;
  }

  @AfterEach
  void tearDown() throws Exception {
    if (fx != null) {
      fs.close();
      fx.close();
    }
  }

  /** A file of 1 MiB, committed in one extent. */
  OpenFile oneMib(String name, byte[] model) throws Exception {
    OpenFile f = fs.create(Vfs.ROOT, name, 0644, RDWR, ROOT);
    WriteAheadTest.write(f, 0, model);
    f.fsync(false);
    assertEquals(1, committed.extents(f.ino()).size());
    return f;
  }

  /** 300 scattered 4 KiB writes over a 1 MiB file, into {@code model} too. */
  static void scatter(OpenFile f, byte[] model, int seed) throws FsException {
    Random rnd = new Random(seed);
    for (int i = 0; i < 300; i++) {
      int off = rnd.nextInt(256) * 4096;
      byte[] d = DataPathTest.bytes(4096, seed * 1000 + i);
      DataPathTest.write(f, off, d);
      System.arraycopy(d, 0, model, off, d.length);
    }
  }

  @Test
  void randomOverwritesKeepTheExtentsAndCommitOnlyTheSizeAndTimes() throws Exception {
    start(true);
    byte[] model = DataPathTest.bytes(1 << 20, 1);
    OpenFile f = oneMib("r", model);
    List<FileExtent> before = committed.extents(f.ino());
    long used = fx.allocator.usedBlocks();
    long mtime = fs.getattr(f.ino()).mtimeNs();
    scatter(f, model, 2);
    long commits = fs.stats().storeCommits();
    f.fsync(false);
    assertEquals(1, fs.stats().storeCommits() - commits, "one commit for all of them");
    assertEquals(before, committed.extents(f.ino()), "no extent changed");
    assertEquals(used, fx.allocator.usedBlocks(), "no block allocated");
    assertTrue(fs.stats().overwrittenInPlaceBlocks() > 0);
    assertEquals(0, fx.allocator.openPermits.get(), "every permit closed");
    assertTrue(fs.getattr(f.ino()).mtimeNs() > mtime, "the commit carried the times");
    assertEquals(0, fx.allocator.promised(), "no promise left behind");
    f.release();
    FsFixture.Node other = fx.node("n2");
    try {
      OpenFile r = other.fs.open(f.ino(), 0, ROOT);
      assertArrayEquals(model, DataPathTest.read(r, 0, model.length), "another node reads them");
      r.release();
    } finally {
      other.fs.close();
    }
  }

  @Test
  void withoutAPermitTheSameOverwritesGoToFreshBlocks() throws Exception {
    start(false);
    byte[] model = DataPathTest.bytes(1 << 20, 1);
    OpenFile f = oneMib("c", model);
    List<FileExtent> before = committed.extents(f.ino());
    scatter(f, model, 2);
    f.fsync(false);
    assertNotEquals(before, committed.extents(f.ino()), "copy on write: new extents");
    assertEquals(0, fs.stats().overwrittenInPlaceBlocks());
    assertArrayEquals(model, DataPathTest.read(f, 0, model.length));
    f.release();
  }

  /**
   * Only blocks wholly below the committed size are written in place: a block the size ends in
   * goes to a fresh block, so a crash never leaves bytes past the size that no commit wrote.
   */
  @Test
  void aBlockTheCommittedSizeEndsInIsNotOverwrittenInPlace() throws Exception {
    start(true);
    OpenFile f = fs.create(Vfs.ROOT, "s", 0644, RDWR, ROOT);
    int bs = 4096;
    DataPathTest.write(f, 0, DataPathTest.bytes(bs + 100, 3));
    f.fsync(false);
    List<FileExtent> before = committed.extents(f.ino());
    byte[] more = DataPathTest.bytes(3900, 4);
    DataPathTest.write(f, bs + 100, more); // inside block 1, past the size
    fs.setattr(f.ino(), SetAttr.size(bs + 2000), ROOT); // flushes, then cuts
    assertEquals(bs + 2000, committed.committedSize(f.ino()));
    assertEquals(0, fs.stats().overwrittenInPlaceBlocks(), "block 1 holds the size's end");
    assertNotEquals(before, committed.extents(f.ino()), "block 1 went to a fresh block");
    byte[] expect = new byte[bs + 2000];
    System.arraycopy(DataPathTest.bytes(bs + 100, 3), 0, expect, 0, bs + 100);
    System.arraycopy(more, 0, expect, bs + 100, 1900);
    assertArrayEquals(expect, DataPathTest.read(f, 0, 2 * bs));
    DataPathTest.write(f, 10, new byte[] {7}); // block 0 lies wholly below the size
    f.fsync(false);
    expect[10] = 7;
    assertEquals(1, fs.stats().overwrittenInPlaceBlocks());
    assertEquals(bs + 2000, committed.committedSize(f.ino()));
    assertArrayEquals(expect, DataPathTest.read(f, 0, 2 * bs));
    f.release();
  }

  @Test
  void overwritesTruncatesPunchesAndFsyncsAgreeWithAModel() throws Exception {
    start(true);
    OpenFile f = fs.create(Vfs.ROOT, "m", 0644, RDWR, ROOT);
    FileModel model = new FileModel();
    model.run(fs, f, new Random(5), 600, 24, 3, 4);
    assertTrue(fs.stats().overwrittenInPlaceBlocks() > 0, "the run overwrote in place");
    model.check(fs, f, committed::committedSize);
    long mapped = committed.extents(f.ino()).stream().mapToLong(FileExtent::length).sum();
    assertEquals(mapped, fx.allocator.usedBlocks(), "every allocated block mapped once");
    assertEquals(0, fx.allocator.promised());
  }

  /**
   * Invariant 4: the lock is checked after the permit and before the write, so a node whose lock
   * is gone writes nothing over the blocks (another node may own the file by now).
   */
  @Test
  void aLostLockWritesNothingOverTheCommittedBlocks() throws Exception {
    start(true);
    byte[] model = DataPathTest.bytes(1 << 20, 1);
    FsFixture.Node n1 = fx.node("n0", SMALL);
    fs.close();
    fs = n1.fs;
    OpenFile f = oneMib("lost", model);
    DataPathTest.write(f, 8192, DataPathTest.bytes(4096, 9));
    // The session's deadline passes just as the permit is granted (after the flush's first
    // look at the lock), and etcd expires its lock key.
    fx.allocator.onPermit = () -> {
      n1.lockService.expireSession();
      fx.raiseElsewhere(f.ino());
    };
    int permits = fx.allocator.permits.get();
    assertEquals(Errno.EIO, assertThrows(FsException.class, () -> f.fsync(false)).errno());
    assertTrue(fx.allocator.permits.get() > permits, "the permit came first, then the check");
    assertEquals(0, fx.allocator.openPermits.get());
    FileExtent e = committed.extents(f.ino()).get(0);
    ByteBuffer onDevice = ByteBuffer.allocate(4096);
    fx.device.read(onDevice, (e.deviceBlock() + 2) * 4096);
    assertArrayEquals(Arrays.copyOfRange(model, 8192, 8192 + 4096), onDevice.array(),
        "the committed block is as it was");
    f.release(); // the loss was reported at the fsync; nothing is left buffered
  }
}

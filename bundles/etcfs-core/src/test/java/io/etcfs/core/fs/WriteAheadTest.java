package io.etcfs.core.fs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.core.fs.meta.Codec;
import io.etcfs.core.fs.meta.FileExtent;
import io.etcfs.spi.meta.KeyValue;
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
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Write early, commit late: a write that finds the buffer full writes the buffered blocks to
 * fresh device blocks and commits them only at the next flush. Nothing is committed before
 * that, reads see the blocks at once, and every way a buffer ends (commit, truncate, overwrite,
 * lost lock, recall) maps or gives back each of them exactly once.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class WriteAheadTest {
  static final Caller ROOT = Caller.ROOT;
  static final int RDWR = 2;
  /** A 256 KiB node budget: a file's share is 64 KiB, so 16 blocks buffer and the rest go ahead. */
  static final long SMALL = 256 * 1024;

  @TempDir Path dir;
  FsFixture fx;
  FsFixture.Node node;
  EtcFs fs;

  void start(long dataBytes, long buffer) throws Exception {
    fx = new FsFixture(dir, dataBytes);
    node = fx.node("n1", buffer);
    fs = node.fs;
  }

  @AfterEach
  void tearDown() throws Exception {
    if (fx != null) {
      fs.close();
      fx.close();
    }
  }

  @Test
  void aFullBufferGoesToTheDeviceButIsCommittedOnlyAtTheFsync() throws Exception {
    start(0, SMALL);
    OpenFile f = fs.create(Vfs.ROOT, "seq", 0644, RDWR, ROOT);
    byte[] data = DataPathTest.bytes(2 << 20, 7);
    write(f, 0, data);
    assertTrue(fs.stats().writtenAheadBlocks() >= 400, "written ahead: "
        + fs.stats().writtenAheadBlocks());
    assertTrue(extents(f.ino()).isEmpty(), "nothing committed before the fsync");
    assertEquals(0, committedSize(f.ino()));
    assertEquals(data.length, fs.getattr(f.ino()).size(), "this node sees its writes");
    assertArrayEquals(data, DataPathTest.read(f, 0, data.length), "read from where it went");
    long commits = fs.stats().storeCommits();
    f.fsync(false);
    assertTrue(fs.stats().storeCommits() - commits <= 3,
        "2 MiB in few commits: " + (fs.stats().storeCommits() - commits));
    List<FileExtent> map = extents(f.ino());
    assertEquals(1, map.size(), "contiguous on the device: " + map);
    assertEquals(512, map.get(0).length());
    assertEquals(data.length, committedSize(f.ino()));
    assertEquals(512, fx.allocator.usedBlocks());
    f.release();
    OpenFile r = fs.open(f.ino(), 0, ROOT);
    assertArrayEquals(data, DataPathTest.read(r, 0, data.length));
    r.release();
  }

  @Test
  void anotherNodesReadRecallsAndCommitsWhatWasWrittenAhead() throws Exception {
    start(0, SMALL);
    FsFixture.Node other = fx.node("n2");
    try {
      OpenFile w = fs.create(Vfs.ROOT, "shared", 0644, RDWR, ROOT);
      byte[] data = DataPathTest.bytes(1 << 20, 8);
      write(w, 0, data);
      assertTrue(fs.stats().writtenAheadBlocks() > 0);
      OpenFile r = other.fs.open(w.ino(), 0, ROOT); // recalls n1's lock: n1 commits first
      assertArrayEquals(data, DataPathTest.read(r, 0, data.length));
      r.release();
      DataPathTest.write(w, 4096, new byte[] {9}); // n1 asks for its lock back
      w.release();
      assertEquals(256, fx.allocator.usedBlocks(), "each block mapped once, the replaced freed");
    } finally {
      other.fs.close();
    }
  }

  @Test
  void overwritesTruncatesAndPunchesOfWrittenAheadBlocksAgreeWithAModel() throws Exception {
    start(0, SMALL);
    OpenFile f = fs.create(Vfs.ROOT, "m", 0644, RDWR, ROOT);
    FileModel model = new FileModel();
    model.run(fs, f, new Random(11), 400, 20, 1, 2); // mostly long runs: they go ahead
    assertTrue(fs.stats().writtenAheadBlocks() > 0, "the run exercised writing ahead");
    model.check(fs, f, this::committedSize);
    long mapped = extents(f.ino()).stream().mapToLong(FileExtent::length).sum();
    assertEquals(mapped, fx.allocator.usedBlocks(), "no written-ahead block left allocated");
    assertEquals(0, fx.allocator.promised());
  }

  @Test
  void aTruncateIntoAWrittenAheadBlockZeroesItsTail() throws Exception {
    start(0, SMALL);
    OpenFile f = fs.create(Vfs.ROOT, "t", 0644, RDWR, ROOT);
    byte[] ones = new byte[512 * 1024];
    Arrays.fill(ones, (byte) 1);
    write(f, 0, ones); // block 2 is written ahead
    DataPathTest.write(f, ones.length, new byte[4096]); // and stays ahead, not buffered again
    fs.setattr(f.ino(), SetAttr.size(10_000), ROOT);
    fs.setattr(f.ino(), SetAttr.size(12_288), ROOT);
    byte[] expect = new byte[12_288];
    Arrays.fill(expect, 0, 10_000, (byte) 1);
    assertArrayEquals(expect, DataPathTest.read(f, 0, 20_000));
    f.release();
    assertEquals(3, fx.allocator.usedBlocks(), "blocks past the end given back");
  }

  @Test
  void seekSeesWrittenAheadBlocksAsData() throws Exception {
    start(0, SMALL);
    OpenFile f = fs.create(Vfs.ROOT, "s", 0644, RDWR, ROOT);
    write(f, 1 << 20, new byte[256 * 1024]); // blocks 256..319, most ahead
    DataPathTest.write(f, 4 << 20, new byte[4096]); // a hole between
    assertTrue(fs.stats().writtenAheadBlocks() > 0);
    assertEquals(1 << 20, f.seek(0, false), "SEEK_DATA");
    assertEquals((1 << 20) + 256 * 1024, f.seek(1 << 20, true), "SEEK_HOLE");
    assertEquals(4 << 20, f.seek((1 << 20) + 256 * 1024, false));
    f.release();
  }

  /**
   * Invariant 4: a node that lost its lock commits nothing it buffered under it, and the blocks it
   * wrote ahead are given back, not left allocated until the next rebuild.
   */
  @Test
  void aLostLockCommitsNothingAndGivesTheWrittenAheadBlocksBack() throws Exception {
    start(0, SMALL);
    OpenFile f = fs.create(Vfs.ROOT, "lost", 0644, RDWR, ROOT);
    write(f, 0, DataPathTest.bytes(1 << 20, 3));
    assertTrue(fs.stats().writtenAheadBlocks() > 0);
    assertTrue(fx.allocator.usedBlocks() > 0, "ahead: allocated, not committed");
    // another node was granted the lock (this one's session expired) and raised its fence
    fx.raiseElsewhere(f.ino());
    assertEquals(Errno.EIO, assertThrows(FsException.class, () -> f.fsync(false)).errno());
    assertEquals(Errno.EIO, assertThrows(FsException.class, f::release).errno());
    assertTrue(extents(f.ino()).isEmpty(), "nothing committed");
    assertEquals(0, fx.allocator.usedBlocks(), "the written-ahead blocks came back");
    assertEquals(0, fx.allocator.promised());
  }

  /**
   * A write-out's device writes run beside the writer: its next writes are taken while the
   * device is still busy; a read of a block in flight, the fsync and a lost lock each wait for
   * them to land — the last before any of their blocks goes back to the allocator (invariant 1).
   */
  @Test
  void aWriterGoesOnWhileItsWriteOutLandsAndWhatNeedsItWaits() throws Exception {
    start(0, SMALL);
    OpenFile f = fs.create(Vfs.ROOT, "busy", 0644, RDWR, ROOT);
    byte[] data = DataPathTest.bytes(40 * 4096, 5);
    fx.device.hold();
    write(f, 0, Arrays.copyOf(data, 20 * 4096)); // 16 blocks fill the share: a write-out
    awaitTrue(() -> fx.device.waiting.get() == 1, "the write-out's device write is held");
    write(f, 20 * 4096, Arrays.copyOfRange(data, 20 * 4096, 30 * 4096)); // taken meanwhile
    assertEquals(1, fx.device.waiting.get());

    Thread reader = new Thread(() -> {
      try {
        assertArrayEquals(Arrays.copyOf(data, 4096), DataPathTest.read(f, 0, 4096));
      } catch (FsException e) {
        throw new IllegalStateException(e);
      }
    });
    reader.start();
    awaitTrue(() -> reader.getState() == Thread.State.WAITING, "the read waits for the write");
    fx.device.release();
    reader.join();
    write(f, 30 * 4096, Arrays.copyOfRange(data, 30 * 4096, data.length));
    f.fsync(false);
    assertEquals(data.length, committedSize(f.ino()));
    assertArrayEquals(data, DataPathTest.read(f, 0, data.length));

    fx.device.hold();
    write(f, data.length, new byte[20 * 4096]);
    awaitTrue(() -> fx.device.waiting.get() == 1, "a second write-out is held");
    long used = fx.allocator.usedBlocks();
    fx.raiseElsewhere(f.ino()); // the lock is lost while the write is in flight
    Thread fsync = new Thread(() -> assertThrows(FsException.class, () -> f.fsync(false)));
    fsync.start();
    awaitTrue(() -> fsync.getState() == Thread.State.WAITING, "the drop waits for the write");
    assertEquals(used, fx.allocator.usedBlocks(), "no block given back while a write may land");
    fx.device.release();
    fsync.join();
    assertThrows(FsException.class, f::release);
    assertEquals(40, fx.allocator.usedBlocks(), "the written-ahead blocks came back after it");
  }

  /**
   * A write-out the device refused loses nothing the writes accepted: its blocks go back into
   * the buffer and its device blocks to the allocator, and the fsync writes them again.
   */
  @Test
  void aWriteOutTheDeviceRefusedIsWrittenAgainByTheFsync() throws Exception {
    start(0, SMALL);
    OpenFile f = fs.create(Vfs.ROOT, "again", 0644, RDWR, ROOT);
    byte[] data = DataPathTest.bytes(1 << 20, 6);
    fx.device.failWrites.set(1);
    write(f, 0, data);
    f.fsync(false);
    assertEquals(0, fx.device.failWrites.get(), "a write-out was refused");
    assertEquals(data.length, committedSize(f.ino()));
    assertArrayEquals(data, DataPathTest.read(f, 0, data.length));
    assertEquals(256, fx.allocator.usedBlocks(), "the refused write-out's blocks came back");
    f.release();
  }

  private static void awaitTrue(java.util.function.BooleanSupplier ok, String what)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!ok.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("not within 30 s: " + what);
      }
      Thread.sleep(5);
    }
  }

  /** Issue 12's rule holds ahead too: the write that cannot be stored fails, nothing is lost. */
  @Test
  void noSpaceFailsTheWriteAndKeepsEverythingAccepted() throws Exception {
    start(0, SMALL);
    long free = fx.allocator.freeBlocks();
    OpenFile f = fs.create(Vfs.ROOT, "full", 0644, RDWR, ROOT);
    byte[] most = DataPathTest.bytes((int) ((free - 4) * 4096), 5);
    write(f, 0, most);
    assertTrue(fs.stats().writtenAheadBlocks() > 0);
    assertEquals(Errno.ENOSPC, assertThrows(FsException.class,
        () -> f.write(ByteBuffer.wrap(new byte[5 * 4096]), most.length)).errno());
    DataPathTest.write(f, most.length, new byte[4 * 4096]); // the last four blocks still fit
    f.fsync(false);
    assertEquals(most.length + 4 * 4096L, committedSize(f.ino()));
    assertArrayEquals(most, DataPathTest.read(f, 0, most.length));
    assertEquals(0, fx.allocator.freeBlocks());
    f.release();
  }

  /**
   * A release runs after close(2) returned, so an rm right after a close can return before the
   * file's blocks are free: a write that finds no space while another file's release is in
   * flight waits for it and asks again instead of answering ENOSPC at once.
   */
  @Test
  void aWriteThatFindsNoSpaceWaitsForReleasesInFlight() throws Exception {
    start(0, SMALL);
    OpenFile big = fs.create(Vfs.ROOT, "big", 0644, RDWR, ROOT);
    write(big, 0, new byte[(int) (fx.allocator.freeBlocks() * 4096)]);
    big.release();
    OpenFile f = fs.create(Vfs.ROOT, "next", 0644, RDWR, ROOT);
    assertEquals(Errno.ENOSPC, assertThrows(FsException.class,
        () -> f.write(ByteBuffer.wrap(new byte[4096]), 0)).errno(), "none in flight: at once");
    fs.ctx.releasing.begin(big.ino()); // as if big's last close were still committing
    Thread writer = Thread.currentThread();
    Thread release = new Thread(() -> {
      try {
        while (writer.getState() != Thread.State.TIMED_WAITING) {
          Thread.onSpinWait();
        }
        fs.unlink(Vfs.ROOT, "big", ROOT);
      } catch (FsException e) {
        throw new IllegalStateException(e);
      } finally {
        fs.ctx.releasing.end(big.ino());
      }
    });
    release.start();
    DataPathTest.write(f, 0, new byte[4096]);
    release.join();
    f.fsync(false);
    assertEquals(4096, committedSize(f.ino()));
    f.release();
  }

  /**
   * The kernel sends a release after close(2) returned, so the rm that follows can reach the
   * node first: the file, still open here, loses its name and goes at that release. A write
   * that finds no space meanwhile waits for it; a file that a process keeps open after its
   * unlink is waited for once, a bounded time, and later writes answer ENOSPC at once.
   */
  @Test
  void aWriteThatFindsNoSpaceWaitsForTheCloseOfAFileUnlinkedWhileOpen() throws Exception {
    start(0, SMALL);
    OpenFile big = fs.create(Vfs.ROOT, "big", 0644, RDWR, ROOT);
    write(big, 0, new byte[(int) (fx.allocator.freeBlocks() * 4096)]);
    big.fsync(false);
    fs.unlink(Vfs.ROOT, "big", ROOT); // before the release arrived: big is open, nameless
    OpenFile f = fs.create(Vfs.ROOT, "next", 0644, RDWR, ROOT);
    Thread writer = Thread.currentThread();
    Thread release = new Thread(() -> {
      try {
        while (writer.getState() != Thread.State.TIMED_WAITING) {
          Thread.onSpinWait();
        }
        big.release(); // the release arrives while the write waits
      } catch (FsException e) {
        throw new IllegalStateException(e);
      }
    });
    release.start();
    DataPathTest.write(f, 0, new byte[4096]);
    release.join();
    f.fsync(false);
    assertEquals(4096, committedSize(f.ino()));

    OpenFile kept = fs.create(Vfs.ROOT, "kept", 0644, RDWR, ROOT);
    write(kept, 0, new byte[(int) (fx.allocator.freeBlocks() * 4096)]);
    kept.fsync(false);
    fs.unlink(Vfs.ROOT, "kept", ROOT); // and kept open, on purpose
    long t0 = System.nanoTime();
    assertEquals(Errno.ENOSPC, assertThrows(FsException.class,
        () -> f.write(ByteBuffer.wrap(new byte[4096]), 4096)).errno());
    long waitedMs = (System.nanoTime() - t0) / 1_000_000;
    assertTrue(waitedMs >= Releasing.ORPHAN_WAIT_MILLIS, "waited " + waitedMs + " ms");
    t0 = System.nanoTime();
    assertEquals(Errno.ENOSPC, assertThrows(FsException.class,
        () -> f.write(ByteBuffer.wrap(new byte[4096]), 4096)).errno());
    waitedMs = (System.nanoTime() - t0) / 1_000_000;
    assertTrue(waitedMs < Releasing.ORPHAN_WAIT_MILLIS, "waited again: " + waitedMs + " ms");
    kept.release();
    DataPathTest.write(f, 4096, new byte[4096]); // its space came back with its close
    f.release();
  }

  /** As the kernel sends a long write: in requests of at most 32 KiB. */
  static void write(OpenFile f, long off, byte[] data) throws FsException {
    for (int at = 0; at < data.length; at += 32 * 1024) {
      DataPathTest.write(f, off + at,
          Arrays.copyOfRange(data, at, Math.min(data.length, at + 32 * 1024)));
    }
  }

  long committedSize(long ino) {
    return fx.store.get(fx.keys.inode(ino)).map(kv -> Codec.decodeInode(kv.value()).size())
        .orElseThrow();
  }

  List<FileExtent> extents(long ino) {
    List<FileExtent> out = new ArrayList<>();
    for (KeyValue kv : fx.store.prefix(fx.keys.extentPrefix(ino), 0).kvs()) {
      out.addAll(Codec.decodeExtents(kv.value()));
    }
    return out;
  }
}

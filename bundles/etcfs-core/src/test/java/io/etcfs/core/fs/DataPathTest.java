package io.etcfs.core.fs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.core.fs.meta.Codec;
import io.etcfs.core.fs.meta.FileExtent;
import io.etcfs.spi.meta.KeyValue;
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

@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DataPathTest {
  static final Caller ROOT = Caller.ROOT;
  static final int RDWR = 2;
  static final int APPEND = 02000;
  static final int TRUNC = 01000;
  static final int EXCL = 0200;
  static final int CREAT = 0100;

  @TempDir Path dir;
  FsFixture fx;
  EtcFs fs;

  void start(long dataBytes, long buffer) throws Exception {
    fx = new FsFixture(dir, dataBytes);
    fs = fx.node("n1", buffer).fs;
  }

  @AfterEach
  void tearDown() throws Exception {
    if (fs != null) {
      fs.close();
      fx.close();
    }
  }

  static byte[] read(OpenFile f, long off, int len) throws FsException {
    ByteBuffer b = ByteBuffer.allocate(len);
    int n = f.read(b, off);
    return Arrays.copyOf(b.array(), n);
  }

  static void write(OpenFile f, long off, byte[] data) throws FsException {
    assertEquals(data.length, f.write(ByteBuffer.wrap(data), off));
  }

  static byte[] bytes(int n, int seed) {
    byte[] b = new byte[n];
    new Random(seed).nextBytes(b);
    return b;
  }

  @Test
  void writeReadOverwriteAcrossCommit() throws Exception {
    start(0, EtcFs.DEFAULT_BUFFER_BYTES);
    OpenFile f = fs.create(Vfs.ROOT, "f", 0644, RDWR | CREAT, ROOT);
    byte[] model = bytes(10_000, 1);
    write(f, 0, model);
    assertArrayEquals(model, read(f, 0, 20_000)); // from the buffer
    f.fsync(false);
    assertEquals(10_000, fs.getattr(f.ino()).size());
    assertEquals(3 * 8, fs.getattr(f.ino()).blocks());
    assertArrayEquals(model, read(f, 0, 20_000)); // from the device
    byte[] patch = bytes(100, 2);
    write(f, 4090, patch);
    System.arraycopy(patch, 0, model, 4090, 100);
    f.fsync(false);
    assertArrayEquals(model, read(f, 0, 10_000));
    assertArrayEquals(Arrays.copyOfRange(model, 4000, 4200), read(f, 4000, 200));
    f.release();
    assertEquals(3, fx.allocator.usedBlocks(), "the overwritten blocks were released");
    OpenFile again = fs.open(f.ino(), 0, ROOT);
    assertArrayEquals(model, read(again, 0, 10_000));
    assertEquals(0, read(again, 10_000, 10).length);
    again.release();
  }

  @Test
  void aStatAfterAWriteShowsItBeforeAnyFlush() throws Exception {
    start(0, EtcFs.DEFAULT_BUFFER_BYTES);
    OpenFile f = fs.create(Vfs.ROOT, "f", 0644, RDWR, ROOT);
    long before = fs.getattr(f.ino()).mtimeNs();
    write(f, 0, new byte[100]);
    assertEquals(100, fs.getattr(f.ino()).size(), "buffered writes count for the size");
    assertEquals(100, fs.lookup(Vfs.ROOT, "f", ROOT).size());
    assertTrue(fs.getattr(f.ino()).mtimeNs() >= before);
    write(f, 4000, new byte[10]);
    assertEquals(4010, fs.getattr(f.ino()).size());
    f.release();
    assertEquals(4010, fs.getattr(f.ino()).size(), "and the committed size after close");
  }

  @Test
  void holesReadAsZeros() throws Exception {
    start(0, EtcFs.DEFAULT_BUFFER_BYTES);
    OpenFile f = fs.create(Vfs.ROOT, "f", 0644, RDWR, ROOT);
    write(f, 1 << 20, new byte[] {7});
    f.fsync(false);
    assertEquals((1 << 20) + 1, fs.getattr(f.ino()).size());
    assertEquals(8, fs.getattr(f.ino()).blocks());
    byte[] all = read(f, 0, (1 << 20) + 1);
    assertEquals(7, all[1 << 20]);
    for (int i = 0; i < 1 << 20; i++) {
      assertEquals(0, all[i]);
    }
    f.release();
  }

  @Test
  void truncateIntoABlockZeroesItsTail() throws Exception {
    start(0, EtcFs.DEFAULT_BUFFER_BYTES);
    OpenFile f = fs.create(Vfs.ROOT, "f", 0644, RDWR, ROOT);
    byte[] data = bytes(8192, 3);
    write(f, 0, data);
    f.fsync(false);
    fs.setattr(f.ino(), SetAttr.size(100), ROOT);
    assertEquals(100, fs.getattr(f.ino()).size());
    assertEquals(8, fs.getattr(f.ino()).blocks());
    fs.setattr(f.ino(), SetAttr.size(8192), ROOT);
    byte[] back = read(f, 0, 8192);
    assertArrayEquals(Arrays.copyOf(data, 100), Arrays.copyOf(back, 100));
    for (int i = 100; i < 8192; i++) {
      assertEquals(0, back[i], "stale byte at " + i);
    }
    write(f, 50, new byte[] {1});
    fs.setattr(f.ino(), SetAttr.size(40), ROOT); // truncate with dirty data buffered
    fs.setattr(f.ino(), SetAttr.size(60), ROOT);
    assertArrayEquals(new byte[20], Arrays.copyOfRange(read(f, 0, 60), 40, 60));
    f.release();
  }

  @Test
  void appendTruncAndExcl() throws Exception {
    start(0, EtcFs.DEFAULT_BUFFER_BYTES);
    OpenFile f = fs.create(Vfs.ROOT, "f", 0644, RDWR, ROOT);
    write(f, 0, "hello".getBytes());
    f.release();
    OpenFile a = fs.open(f.ino(), RDWR | APPEND, ROOT);
    write(a, 0, " world".getBytes());
    assertEquals("hello world", new String(read(a, 0, 100)));
    a.release();
    FsException e = assertThrows(FsException.class,
        () -> fs.create(Vfs.ROOT, "f", 0644, RDWR | CREAT | EXCL, ROOT));
    assertEquals(Errno.EEXIST, e.errno());
    OpenFile t = fs.create(Vfs.ROOT, "f", 0644, RDWR | CREAT | TRUNC, ROOT);
    assertEquals(0, fs.getattr(t.ino()).size());
    assertEquals(0, fx.allocator.usedBlocks());
    OpenFile ro = fs.open(t.ino(), 0, ROOT);
    assertEquals(Errno.EBADF, assertThrows(FsException.class,
        () -> ro.write(ByteBuffer.wrap(new byte[1]), 0)).errno());
    ro.release();
    t.release();
  }

  @Test
  void largeSequentialWritesAreContiguousAndBounded() throws Exception {
    start(64L << 20, 1L << 20); // a 1 MiB buffer for a 24 MiB file
    OpenFile f = fs.create(Vfs.ROOT, "big", 0644, RDWR, ROOT);
    byte[] chunk = bytes(128 * 1024, 4);
    int chunks = 192;
    for (int i = 0; i < chunks; i++) {
      write(f, (long) i * chunk.length, chunk);
    }
    f.release();
    List<FileExtent> map = extents(f.ino());
    assertEquals(1, map.size(), "one contiguous extent: " + map);
    assertEquals(chunks * 32L, map.get(0).length());
    OpenFile r = fs.open(f.ino(), 0, ROOT);
    for (int i = 0; i < chunks; i += 37) {
      assertArrayEquals(chunk, read(r, (long) i * chunk.length, chunk.length));
    }
    r.release();
    fs.unlink(Vfs.ROOT, "big", ROOT);
    assertEquals(0, fx.allocator.usedBlocks());
    assertTrue(fx.store.prefix(fx.keys.extentPrefix(f.ino()), 0).kvs().isEmpty());
  }

  @Test
  void fragmentedFilesSpanManyChunksAndPurgeInSteps() throws Exception {
    start(64L << 20, EtcFs.DEFAULT_BUFFER_BYTES);
    OpenFile f = fs.create(Vfs.ROOT, "frag", 0644, RDWR, ROOT);
    for (int i = 0; i < 400; i++) { // every other block: 200 extents
      write(f, i * 8192L, new byte[] {(byte) i});
    }
    f.fsync(false);
    assertTrue(fx.store.prefix(fx.keys.extentPrefix(f.ino()), 0).kvs().size() >= 4);
    for (int i = 0; i < 400; i += 50) {
      assertEquals((byte) i, read(f, i * 8192L, 1)[0]);
    }
    fs.setattr(f.ino(), SetAttr.size(100 * 8192L), ROOT);
    assertEquals(100, fx.allocator.usedBlocks());
    f.release();
    fs.unlink(Vfs.ROOT, "frag", ROOT);
    assertEquals(0, fx.allocator.usedBlocks());
    assertTrue(fx.store.prefix(fx.keys.prefix(), 0).kvs().stream()
        .noneMatch(kv -> kv.keyString().contains("/blocks/")), "reverse map emptied");
  }

  @Test
  void unlinkedOpenFileLivesUntilRelease() throws Exception {
    start(0, EtcFs.DEFAULT_BUFFER_BYTES);
    OpenFile f = fs.create(Vfs.ROOT, "f", 0644, RDWR, ROOT);
    write(f, 0, "data".getBytes());
    f.fsync(false);
    fs.unlink(Vfs.ROOT, "f", ROOT);
    assertEquals(0, fs.getattr(f.ino()).nlink());
    assertTrue(fx.store.get(fx.keys.orphan(f.ino())).isPresent());
    assertEquals("data", new String(read(f, 0, 10)));
    write(f, 4, "more".getBytes());
    f.release();
    assertEquals(Errno.ENOENT, assertThrows(FsException.class, () -> fs.getattr(f.ino())).errno());
    assertTrue(fx.store.get(fx.keys.orphan(f.ino())).isEmpty());
    assertEquals(0, fx.allocator.usedBlocks());
  }

  /**
   * Issue 12: a write is accepted only with space promised for it (an overwrite too: it goes to
   * a fresh block), so the write that cannot be stored fails itself, and everything accepted
   * before it is committed at the fsync; statfs never counts the promised space.
   */
  @Test
  void theWriteThatCannotBeStoredFailsAndNothingAcceptedIsDropped() throws Exception {
    start(0, EtcFs.DEFAULT_BUFFER_BYTES);
    OpenFile f = fs.create(Vfs.ROOT, "f", 0644, RDWR, ROOT);
    write(f, 0, bytes(4096, 1));
    f.fsync(false);
    long free = fx.allocator.freeBlocks();
    byte[] most = bytes((int) ((free - 1) * 4096), 2);
    write(f, 4096, most);
    assertEquals(1, fs.statfs().freeBlocks(), "the accepted write's space is promised");
    byte[] two = new byte[8192];
    assertEquals(Errno.ENOSPC, assertThrows(FsException.class,
        () -> f.write(ByteBuffer.wrap(two), 4096 + most.length)).errno());
    byte[] first = bytes(4096, 3);
    write(f, 0, first); // overwrites a committed block: takes the last free one
    assertEquals(Errno.ENOSPC, assertThrows(FsException.class,
        () -> f.write(ByteBuffer.wrap(new byte[1]), 4096 + most.length)).errno());
    write(f, 0, first); // already buffered: needs nothing more
    f.fsync(false);
    assertEquals(4096L + most.length, fs.getattr(f.ino()).size());
    assertArrayEquals(first, read(f, 0, 4096));
    assertArrayEquals(most, read(f, 4096, most.length));
    assertEquals(1, fx.allocator.freeBlocks(), "the overwritten block came back");
    assertEquals(0, fx.allocator.promised());
    f.release();
  }

  @Test
  void droppedBufferGivesItsPromiseBack() throws Exception {
    start(0, EtcFs.DEFAULT_BUFFER_BYTES);
    long free = fx.allocator.freeBlocks();
    OpenFile f = fs.create(Vfs.ROOT, "f", 0644, RDWR, ROOT);
    write(f, 0, new byte[10 * 4096]);
    assertEquals(10, fx.allocator.promised());
    fs.setattr(f.ino(), SetAttr.size(8192), ROOT); // drops the buffer past the end
    assertEquals(2, fx.allocator.promised() + fx.allocator.usedBlocks());
    f.release();
    assertEquals(0, fx.allocator.promised());
    assertEquals(free - 2, fx.allocator.freeBlocks());
  }

  @Test
  void randomWritesAgreeWithAModel() throws Exception {
    start(0, 256 * 1024);
    OpenFile f = fs.create(Vfs.ROOT, "r", 0644, RDWR, ROOT);
    Random rnd = new Random(5);
    byte[] model = new byte[300_000];
    int size = 0;
    for (int i = 0; i < 300; i++) {
      int off = rnd.nextInt(model.length - 5000);
      byte[] d = bytes(1 + rnd.nextInt(5000), i);
      write(f, off, d);
      System.arraycopy(d, 0, model, off, d.length);
      size = Math.max(size, off + d.length);
      if (i % 37 == 0) {
        f.fsync(false);
      }
      if (i % 91 == 0) {
        int cut = rnd.nextInt(size + 1);
        fs.setattr(f.ino(), SetAttr.size(cut), ROOT);
        Arrays.fill(model, cut, model.length, (byte) 0);
        size = cut;
      }
    }
    assertArrayEquals(Arrays.copyOf(model, size), read(f, 0, model.length));
    f.release();
    OpenFile r = fs.open(f.ino(), 0, ROOT);
    assertArrayEquals(Arrays.copyOf(model, size), read(r, 0, model.length));
    r.release();
    long mapped = extents(f.ino()).stream().mapToLong(FileExtent::length).sum();
    assertEquals(mapped, fx.allocator.usedBlocks());
    assertEquals(mapped * 8, fs.getattr(f.ino()).blocks());
  }

  List<FileExtent> extents(long ino) {
    List<FileExtent> out = new ArrayList<>();
    for (KeyValue kv : fx.store.prefix(fx.keys.extentPrefix(ino), 0).kvs()) {
      out.addAll(Codec.decodeExtents(kv.value()));
    }
    return out;
  }
}

package io.etcfs.core.fs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.MetaStoreException;
import io.etcfs.spi.meta.WatchListener;
import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.Vfs;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The store seen through a proxy that counts reads and can fail like an unreachable etcd. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class StoreFailureTest {
  @TempDir Path dir;
  FsFixture fx;
  EtcFs fs;
  final AtomicBoolean down = new AtomicBoolean();
  final AtomicBoolean commitsTimeOut = new AtomicBoolean();
  final AtomicInteger reads = new AtomicInteger();
  final AtomicInteger watches = new AtomicInteger();
  volatile WatchListener listener;
  MetaStore proxy;

  @BeforeEach
  void setUp() throws Exception {
    fx = new FsFixture(dir, 0);
    proxy = (MetaStore) Proxy.newProxyInstance(getClass().getClassLoader(),
        new Class<?>[] {MetaStore.class}, (p, m, args) -> {
          if (down.get() && !m.getName().equals("watch")) {
            throw new MetaStoreException(MetaStoreException.Kind.UNAVAILABLE, "etcd down (test)");
          }
          if (commitsTimeOut.get() && m.getName().equals("commit")) {
            m.invoke(fx.store, args); // applied, but the answer is lost
            throw new MetaStoreException(MetaStoreException.Kind.UNAVAILABLE, "timeout (test)");
          }
          if (m.getName().equals("watch")) {
            listener = (WatchListener) args[2];
            watches.incrementAndGet();
          }
          if (m.getName().equals("get") || m.getName().equals("range")) {
            reads.incrementAndGet();
          }
          try {
            return m.invoke(fx.store, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
    fs = fx.new Node("n1", EtcFs.DEFAULT_BUFFER_BYTES, proxy).fs;
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (!fs.watching() && System.nanoTime() < end) {
      Thread.sleep(5);
    }
  }

  @AfterEach
  void tearDown() throws Exception {
    fs.close();
    fx.close();
  }

  @Test
  void unavailableStoreIsEio() throws Exception {
    var f = fs.mknod(Vfs.ROOT, "f", 0644, 0, Caller.ROOT);
    down.set(true);
    assertEquals(Errno.EIO, assertThrows(FsException.class,
        () -> fs.mkdir(Vfs.ROOT, "d", 0755, Caller.ROOT)).errno());
    assertEquals(Errno.EIO, assertThrows(FsException.class,
        () -> fs.readdir(Vfs.ROOT, 0, 10)).errno());
    down.set(false);
    assertEquals(f.ino(), fs.lookup(Vfs.ROOT, "f", Caller.ROOT).ino());
  }

  @Test
  void capabilityLookupsAreAnsweredFromMemory() throws Exception {
    var f = fs.mknod(Vfs.ROOT, "f", 0644, 0, Caller.ROOT);
    assertThrows(FsException.class, () -> fs.getxattr(f.ino(), "security.capability"));
    Thread.sleep(200); // the watch delivers this node's own create, which re-reads the inode once
    assertThrows(FsException.class, () -> fs.getxattr(f.ino(), "security.capability"));
    int before = reads.get();
    for (int i = 0; i < 1000; i++) {
      assertEquals(Errno.ENODATA, assertThrows(FsException.class,
          () -> fs.getxattr(f.ino(), "security.capability")).errno());
    }
    assertEquals(before, reads.get(), "no store round trip per lookup");
    fs.setxattr(f.ino(), "security.capability", new byte[] {1}, 0, Caller.ROOT);
    assertArrayEquals(new byte[] {1}, fs.getxattr(f.ino(), "security.capability"));
  }

  @Test
  void aWatchErrorDropsEverythingAndRestartsTheWatch() throws Exception {
    var f = fs.mknod(Vfs.ROOT, "f", 0644, 0, Caller.ROOT);
    Thread.sleep(200); // let the watch deliver this node's own create
    fs.getattr(f.ino());
    int before = reads.get();
    fs.getattr(f.ino());
    assertEquals(before, reads.get(), "cached");
    listener.onError(new MetaStoreException(MetaStoreException.Kind.COMPACTED, "compacted (test)"));
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (watches.get() < 2 && System.nanoTime() < end) {
      Thread.sleep(5);
    }
    assertEquals(2, watches.get(), "a new watch");
    while (!fs.watching() && System.nanoTime() < end) {
      Thread.sleep(5);
    }
    int after = reads.get();
    fs.getattr(f.ino());
    assertEquals(after + 1, reads.get(), "the cache started empty");
  }

  @Test
  void aCommitWithUnknownOutcomeNeverAbandonsItsBlocks() throws Exception {
    var f = fs.create(Vfs.ROOT, "f", 0644, 2, Caller.ROOT);
    f.write(java.nio.ByteBuffer.wrap(new byte[8192]), 0);
    commitsTimeOut.set(true);
    assertEquals(Errno.EIO, assertThrows(FsException.class, () -> f.fsync(false)).errno());
    commitsTimeOut.set(false);
    assertEquals(java.util.List.of(), fx.allocator.abandoned, "blocks that may be referenced");
    assertEquals(8192, fs.getattr(f.ino()).size(), "the commit did apply");
  }

  /**
   * Blocks written ahead of their commit (a full buffer) and carried by a commit whose outcome
   * is unknown may be mapped now: they are never abandoned nor committed again (that commit
   * would release blocks it maps); their data goes back into memory and the next fsync maps it
   * to fresh blocks, freeing the ones the lost commit mapped.
   */
  @Test
  void writtenAheadBlocksInACommitOfUnknownOutcomeAreMappedOnce() throws Exception {
    EtcFs small = fx.new Node("n2", 256 * 1024, proxy).fs;
    try {
      var f = small.create(Vfs.ROOT, "ahead", 0644, 2, Caller.ROOT);
      byte[] data = DataPathTest.bytes(512 * 1024, 4);
      WriteAheadTest.write(f, 0, data);
      assertTrue(small.stats().writtenAheadBlocks() > 0);
      commitsTimeOut.set(true);
      assertEquals(Errno.EIO, assertThrows(FsException.class, () -> f.fsync(false)).errno());
      commitsTimeOut.set(false);
      assertEquals(java.util.List.of(), fx.allocator.abandoned, "blocks that may be referenced");
      assertArrayEquals(data, DataPathTest.read(f, 0, data.length), "still here, in memory");
      f.fsync(false);
      f.release();
      var r = small.open(f.ino(), 0, Caller.ROOT);
      assertArrayEquals(data, DataPathTest.read(r, 0, data.length));
      r.release();
      assertEquals(128, fx.allocator.usedBlocks(), "mapped once; the lost commit's blocks freed");
    } finally {
      small.close();
    }
  }
}

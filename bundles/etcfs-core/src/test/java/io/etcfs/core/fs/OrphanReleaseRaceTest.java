package io.etcfs.core.fs;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.Txn;
import io.etcfs.spi.meta.TxnResult;
import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.OpenFile;
import io.etcfs.spi.vfs.Vfs;
import io.etcfs.support.meta.ForwardingMetaStore;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The last name of a file open here goes (it becomes an orphan, purged at its last release),
 * and its last release comes while that unlink's commit is still on its way: the release finds
 * the file still linked, the commit then finds it closed. One of them must purge it, or its
 * blocks stay allocated until this node dies. (Found by SwitchIT's churner: the kernel sends
 * RELEASE after close(2) returned, so an rm right after a write races it.)
 */
@Timeout(60)
class OrphanReleaseRaceTest {
  @TempDir Path dir;
  FsFixture fx;
  FsFixture.Node a;
  Held held;
  final ExecutorService pool = Executors.newCachedThreadPool();

  /** Holds the next commit until told, once it has entered. */
  static final class Held extends ForwardingMetaStore {
    volatile CountDownLatch entered;
    volatile CountDownLatch go;

    Held(MetaStore store) {
      super(store);
    }

    @Override
    public TxnResult commit(Txn txn) {
      CountDownLatch e = entered;
      CountDownLatch g = go;
      if (e != null && g != null) {
        entered = null;
        e.countDown();
        try {
          g.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException ex) {
          Thread.currentThread().interrupt();
        }
      }
      return delegate.commit(txn);
    }
  }

  @BeforeEach
  void setUp() throws Exception {
    fx = new FsFixture(dir, 0);
    held = new Held(fx.store);
    a = fx.new Node("a", EtcFs.DEFAULT_BUFFER_BYTES, held);
  }

  @AfterEach
  void tearDown() throws Exception {
    pool.shutdownNow();
    a.fs.close();
    fx.close();
  }

  @Test
  void aReleaseThatComesBeforeTheUnlinkCommitsStillPurgesTheFile() throws Exception {
    OpenFile f = a.fs.create(Vfs.ROOT, "x", 0644, 2, Caller.ROOT);
    f.write(java.nio.ByteBuffer.wrap(new byte[64 * 1024]), 0);
    f.fsync(false);
    long ino = f.ino();
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch go = new CountDownLatch(1);
    held.go = go;
    held.entered = entered;
    Future<?> unlink = pool.submit(() -> {
      a.fs.unlink(Vfs.ROOT, "x", Caller.ROOT);
      return null;
    });
    assertTrue(entered.await(20, TimeUnit.SECONDS), "the unlink's commit began");
    f.release(); // the last release, while the unlink (made with the file open) is held
    go.countDown();
    unlink.get(20, TimeUnit.SECONDS);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while ((fx.store.get(fx.keys.inode(ino)).isPresent()
        || fx.store.get(fx.keys.orphan(ino)).isPresent()) && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertTrue(fx.store.get(fx.keys.inode(ino)).isEmpty(), "inode " + ino + " was not purged");
    assertTrue(fx.store.get(fx.keys.orphan(ino)).isEmpty(), "its orphan key is left");
  }
}

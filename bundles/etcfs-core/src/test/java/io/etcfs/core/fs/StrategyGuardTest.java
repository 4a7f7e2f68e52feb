package io.etcfs.core.fs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.Txn;
import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.OpenFile;
import io.etcfs.spi.vfs.Vfs;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The strategy guard (issue #15): every commit compares the filesystem record, which changes
 * only when the cluster switches its lock backend or allocator, so a node that has not followed
 * a switch commits nothing — neither metadata nor the data it buffered under the old backend.
 */
@Timeout(60)
class StrategyGuardTest {
  static final Caller ROOT = Caller.ROOT;

  @TempDir Path dir;
  FsFixture fx;
  FsFixture.Node a;

  @BeforeEach
  void setUp() throws Exception {
    fx = new FsFixture(dir, 0);
    a = fx.node("a");
  }

  @AfterEach
  void tearDown() throws Exception {
    a.fs.close();
    fx.close();
  }

  /** The cluster switched: the record is rewritten (here by hand, as a cutover would). */
  void switched() {
    byte[] record = fx.store.get(fx.keys.record()).orElseThrow().value();
    fx.store.commit(new Txn().then(Op.put(fx.keys.record(), record)));
  }

  @Test
  void aNodeThatHasNotFollowedASwitchCommitsNoMetadata() throws Throwable {
    a.fs.mkdir(Vfs.ROOT, "before", 0755, ROOT);
    switched();
    FsException e = assertThrows(FsException.class,
        () -> a.fs.mkdir(Vfs.ROOT, "after", 0755, ROOT));
    assertEquals(Errno.EIO, e.errno());
    assertTrue(e.getMessage().contains("switch of lock backend or allocator"), e.getMessage());
    assertEquals(Errno.ENOENT, assertThrows(FsException.class,
        () -> a.fs.lookup(Vfs.ROOT, "after", ROOT)).errno());
  }

  @Test
  void norTheDataItBufferedUnderTheOldBackend() throws Throwable {
    OpenFile f = a.fs.create(Vfs.ROOT, "file", 0644, 2, ROOT);
    f.write(ByteBuffer.wrap("committed".getBytes()), 0);
    f.fsync(false);
    f.write(ByteBuffer.wrap("buffered!".getBytes()), 0);
    switched();
    FsException e = assertThrows(FsException.class, () -> f.fsync(false));
    assertEquals(Errno.EIO, e.errno());
    // what is in etcd is what committed before the switch
    // what another node reads is what committed before the switch (a's lock is recalled; its
    // flush fails on the guard, and the lock goes anyway)
    FsFixture.Node b = fx.node("b");
    try {
      OpenFile r = b.fs.open(b.fs.lookup(Vfs.ROOT, "file", ROOT).ino(), 0, ROOT);
      ByteBuffer buf = ByteBuffer.allocate(64);
      int n = r.read(buf, 0);
      r.release();
      assertEquals("committed", new String(buf.array(), 0, n));
    } finally {
      b.fs.close();
    }
  }
}

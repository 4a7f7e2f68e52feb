package io.etcfs.core.fs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.spi.meta.ForwardingMetaStore;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.Txn;
import io.etcfs.spi.meta.TxnResult;
import io.etcfs.spi.vfs.Attr;
import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.OpenFile;
import io.etcfs.spi.vfs.Vfs;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Directory delegation: a burst of unlinks in one directory takes its exclusive lock; from then
 * on unlinks are answered at once and committed in the background, many per transaction. Node a
 * commits slowly (each commit held {@link Slow#delayMs}), so that what it queued is still
 * uncommitted while node b looks: b must see it anyway, through the recall.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DelegationTest {
  static final Caller ROOT = Caller.ROOT;
  static final int FILE = Attr.S_IFREG | 0644;
  @TempDir Path dir;
  FsFixture fx;
  Slow slow;
  FsFixture.Node a;
  FsFixture.Node b;
  long d;

  /** Node a's view of the store: each commit can be held a while (etcd's fsync, slowed). */
  final class Slow extends ForwardingMetaStore {
    volatile long delayMs;
    volatile int commits;

    Slow() {
      super(fx.store);
    }

    @Override
    public TxnResult commit(Txn txn) {
      commits++;
      long ms = delayMs;
      if (ms > 0) {
        try {
          Thread.sleep(ms);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return delegate.commit(txn);
    }
  }

  @BeforeEach
  void setUp() throws Exception {
    fx = new FsFixture(dir, 0);
    slow = new Slow();
    a = fx.new Node("a", EtcFs.DEFAULT_BUFFER_BYTES, slow);
    b = fx.node("b");
    d = a.fs.mkdir(Vfs.ROOT, "d", 0755, ROOT).ino();
  }

  @AfterEach
  void tearDown() throws Exception {
    a.fs.close();
    b.fs.close();
    fx.close();
  }

  /** Makes {@code n} files in d, then unlinks on a until a holds d's delegation. */
  void delegate(int n) throws Throwable {
    for (int i = 0; i < n; i++) {
      a.fs.mknod(d, "f" + i, FILE, 0, ROOT);
    }
    for (int i = 0; i < Delegations.TAKE_AFTER; i++) {
      a.fs.unlink(d, "f" + i, ROOT);
    }
    TwoNodesTest.eventually(() -> assertTrue(a.fs.delegated(d), "a queues unlinks in d"));
    assertEquals(1, a.fs.stats().delegations());
  }

  int entriesInStore() {
    byte[] p = fx.keys.direntPrefix(d);
    return fx.store.range(p, Keys.prefixEnd(p), 0).kvs().size();
  }

  @Test
  void aBurstOfUnlinksIsQueuedAndCommittedInFewTransactions() throws Throwable {
    delegate(200);
    int before = slow.commits;
    for (int i = Delegations.TAKE_AFTER; i < 200; i++) {
      a.fs.unlink(d, "f" + i, ROOT);
    }
    assertEquals(200 - Delegations.TAKE_AFTER, a.fs.stats().queuedUnlinks());
    a.fs.statfs(); // waits for the queue
    assertEquals(0, entriesInStore(), "every unlink committed");
    int commits = slow.commits - before;
    assertTrue(commits <= 196 / 4, "196 unlinks in " + commits + " commits");
    assertEquals(0, TwoNodesTest.countEntries(b.fs, d));
    assertEquals(0, a.fs.stats().lostUnlinks());
  }

  @Test
  void aNameUnlinkedHereIsGoneAtOnceAndCanBeCreatedAgain() throws Throwable {
    delegate(10);
    slow.delayMs = 200;
    a.fs.unlink(d, "f5", ROOT);
    assertTrue(entriesInStore() > 5, "not committed yet");
    assertEquals(Errno.ENOENT, assertThrows(FsException.class,
        () -> a.fs.lookup(d, "f5", ROOT)).errno());
    assertEquals(Errno.ENOENT, assertThrows(FsException.class,
        () -> a.fs.unlink(d, "f5", ROOT)).errno());
    // a create waits for the queue: the name is free in etcd by then
    a.fs.mknod(d, "f5", FILE, 0, ROOT);
    assertEquals(10 - Delegations.TAKE_AFTER, TwoNodesTest.countEntries(a.fs, d));
  }

  /**
   * The libfuse 2 front end looks names up by path: a queued unlink is gone there too, on this
   * node and the other. (tar x's delayed symlinks — a placeholder unlinked, then a symlink of
   * the same name — failed with EEXIST on that front end while it was not.)
   */
  @Test
  void aPathLookupSeesAQueuedUnlinkOnBothNodes() throws Throwable {
    delegate(10);
    slow.delayMs = 200;
    a.fs.unlink(d, "f5", ROOT);
    assertEquals(Errno.ENOENT, assertThrows(FsException.class,
        () -> a.fs.resolve("/d/f5", ROOT)).errno());
    a.fs.symlink(d, "f5", "../elsewhere", ROOT);
    a.fs.unlink(d, "f6", ROOT);
    assertEquals(Errno.ENOENT, assertThrows(FsException.class,
        () -> b.fs.resolve("/d/f6", ROOT)).errno(), "b recalls the delegation: a commits first");
    assertEquals("../elsewhere", b.fs.readlink(b.fs.resolve("/d/f5", ROOT).ino()));
  }

  @Test
  void anotherNodeSeesAQueuedUnlinkAtOnceThroughTheRecall() throws Throwable {
    delegate(10);
    slow.delayMs = 200;
    a.fs.unlink(d, "f7", ROOT);
    assertTrue(entriesInStore() > 5, "not committed yet");
    assertEquals(Errno.ENOENT, assertThrows(FsException.class,
        () -> b.fs.lookup(d, "f7", ROOT)).errno(), "b recalls the delegation: a commits first");
    assertTrue(a.fs.stats().recalls() >= 1);
    slow.delayMs = 0;
    // b may now create the name; a may not queue under the delegation it gave up
    b.fs.mknod(d, "f7", FILE, 0, ROOT);
    a.fs.unlink(d, "f8", ROOT);
    assertEquals(1, a.fs.stats().queuedUnlinks());
    TwoNodesTest.eventually(() -> assertEquals(10 - Delegations.TAKE_AFTER - 1,
        TwoNodesTest.countEntries(b.fs, d)));
  }

  @Test
  void aCreateOnAnotherNodeWaitsForTheQueue() throws Throwable {
    delegate(10);
    slow.delayMs = 200;
    a.fs.unlink(d, "f9", ROOT);
    b.fs.mknod(d, "f9", FILE, 0, ROOT); // not EEXIST: the unlink a answered is committed first
    assertTrue(b.fs.lookup(d, "f6", ROOT).ino() > 0, "f6 was not unlinked: still there");
    assertEquals(Errno.EEXIST, assertThrows(FsException.class,
        () -> a.fs.mknod(d, "f9", FILE, 0, ROOT)).errno(), "b's f9 shows on a");
  }

  @Test
  void rmdirAfterQueuedUnlinksFindsTheDirectoryEmpty() throws Throwable {
    delegate(40);
    slow.delayMs = 20;
    for (int i = Delegations.TAKE_AFTER; i < 40; i++) {
      a.fs.unlink(d, "f" + i, ROOT);
    }
    a.fs.rmdir(Vfs.ROOT, "d", ROOT);
    assertEquals(Errno.ENOENT, assertThrows(FsException.class,
        () -> b.fs.lookup(Vfs.ROOT, "d", ROOT)).errno());
  }

  @Test
  void theSpaceOfAQueuedUnlinkIsFreeForTheNextWrite() throws Throwable {
    delegate(10);
    OpenFile f = a.fs.create(d, "big", 0644, 2, ROOT);
    f.write(ByteBuffer.wrap(new byte[1 << 20]), 0);
    f.release();
    a.fs.statfs();
    long used = fx.allocator.usedBlocks();
    assertTrue(used >= 256, "used " + used);
    slow.delayMs = 100;
    a.fs.unlink(d, "big", ROOT);
    assertEquals(1, a.fs.stats().queuedUnlinks());
    a.fs.statfs(); // counts what queued unlinks free
    assertEquals(used - 256, fx.allocator.usedBlocks());
  }

  /** Invariant 4 for names: a node that lost the directory's lock commits none of its queue. */
  @Test
  void aLostDelegationCommitsNothingAndTheNamesStay() throws Throwable {
    delegate(10);
    // the lock's grant key is gone (its session expired, another node was granted it)
    fx.store.commit(new Txn().then(Op.delete(Keys.of("/etcfs/" + FsFixture.FS + "/locks/"
        + d + "/a"))));
    a.fs.unlink(d, "f6", ROOT);
    a.fs.statfs();
    assertEquals(1, a.fs.stats().lostUnlinks());
    assertEquals(10 - Delegations.TAKE_AFTER, entriesInStore(), "f6 stays");
    assertTrue(b.fs.lookup(d, "f6", ROOT).ino() > 0, "on b");
    assertTrue(a.fs.lookup(d, "f6", ROOT).ino() > 0, "and back on a");
  }
}

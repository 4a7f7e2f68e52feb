package io.etcfs.core.fs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.MetaStoreException;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.Txn;
import io.etcfs.spi.meta.TxnResult;
import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.OpenFile;
import io.etcfs.spi.vfs.Vfs;
import io.etcfs.support.meta.ForwardingMetaStore;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A create through {@link Vfs#create} also grants its creator the new file's exclusive lock
 * (SPI lock 2.2): the first write takes no lock round trip, and the adopted lock is recalled,
 * guarded and cleaned up like a granted one. Every store call of a node (its engine's and its
 * lock service's) goes through a counter, and can be made to fail.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CreateGrantTest {
  static final Caller ROOT = Caller.ROOT;
  static final int CREATE = Handle.O_CREAT | 2; // O_RDWR
  static final String LOCKS = "/etcfs/" + FsFixture.FS + "/locks/";
  @TempDir Path dir;
  FsFixture fx;
  Node a;
  Node b;

  /** A node whose store calls are counted, and whose commits can be refused or lost. */
  final class Node extends ForwardingMetaStore {
    final AtomicInteger commits = new AtomicInteger();
    /** Commits that match are refused (as etcd refuses a put under a lease it has not). */
    volatile Predicate<Txn> refuse = t -> false;
    /** Commits that match are applied but their answer is lost (a timeout). */
    volatile Predicate<Txn> lose = t -> false;
    final FsFixture.Node node;

    Node(String name) {
      super(fx.store);
      node = fx.new Node(name, EtcFs.DEFAULT_BUFFER_BYTES, this, this);
    }

    @Override
    public TxnResult commit(Txn txn) {
      commits.incrementAndGet();
      if (refuse.test(txn)) {
        refuse = t -> false;
        throw new MetaStoreException(MetaStoreException.Kind.LEASE_NOT_FOUND, "lease (test)");
      }
      TxnResult r = delegate.commit(txn);
      if (lose.test(txn)) {
        throw new MetaStoreException(MetaStoreException.Kind.UNAVAILABLE, "timeout (test)");
      }
      return r;
    }

    EtcFs fs() {
      return node.fs;
    }
  }

  @BeforeEach
  void setUp() throws Exception {
    fx = new FsFixture(dir, 0);
    a = new Node("a");
    b = new Node("b");
    // Each node's first create reserves a batch of inode numbers: not what is counted here.
    a.fs().mknod(Vfs.ROOT, "warm-a", 0644, 0, ROOT);
    b.fs().mknod(Vfs.ROOT, "warm-b", 0644, 0, ROOT);
  }

  @AfterEach
  void tearDown() throws Exception {
    a.fs().close();
    b.fs().close();
    fx.close();
  }

  @Test
  void aNewFileWrittenAndClosedCostsTwoTransactionsNotThree() throws Exception {
    int before = a.commits.get();
    writeNew(a, "f", "granted with its create");
    assertEquals(2, a.commits.get() - before, "the create and the commit at close");
    b.node.lockService.grantOnCreate(false); // the lock taken at the first write, as before
    before = b.commits.get();
    writeNew(b, "g", "taken at the first write");
    assertEquals(4, b.commits.get() - before,
        "the create, the lock, the fence raised at the first write, the commit at close");
    assertEquals("granted with its create", read(b, "f"));
  }

  @Test
  void aFileCreatedAndClosedUnwrittenCostsOnlyItsCreate() throws Exception {
    int before = a.commits.get();
    OpenFile f = a.fs().create(Vfs.ROOT, "empty", 0644, CREATE, ROOT);
    f.flush();
    f.release();
    assertEquals(1, a.commits.get() - before);
    assertEquals(1, lockKeys(f.ino()).size(), "the lock stays cached, as a granted one");
  }

  @Test
  void anotherNodeReadsWhatTheCreatorWroteAndHasNotCommitted() throws Exception {
    OpenFile f = a.fs().create(Vfs.ROOT, "open", 0644, CREATE, ROOT);
    f.write(ByteBuffer.wrap("not committed yet".getBytes(StandardCharsets.UTF_8)), 0);
    assertEquals("not committed yet", read(b, "open")); // recalls the adopted lock
    f.write(ByteBuffer.wrap("NOT".getBytes(StandardCharsets.UTF_8)), 0); // asks for it again
    f.flush();
    f.release();
    assertEquals("NOT committed yet", read(b, "open"));
  }

  /**
   * A request can recall the created lock before the creator has recorded it: the creator must
   * not count it as held then, or its stat would skip the recall of the new holder's writes.
   */
  @Test
  void aCreatedLockRecalledBeforeTheCreatorRecordedItIsNotCountedAsHeld() throws Exception {
    a.node.lockService.recallWhenAdopted(true);
    OpenFile f = a.fs().create(Vfs.ROOT, "recalled", 0644, CREATE, ROOT);
    OpenFile g = b.fs().open(f.ino(), 2, ROOT);
    g.write(ByteBuffer.wrap("12345".getBytes(StandardCharsets.UTF_8)), 0); // buffered on b
    assertEquals(5, a.fs().getattr(f.ino()).size(), "a's stat recalled b's lock");
    g.release();
    f.release();
  }

  @Test
  void aCreateThatFindsTheNameTakenLeavesNoLockBehind() throws Exception {
    OpenFile f = a.fs().create(Vfs.ROOT, "taken", 0644, CREATE, ROOT);
    f.release();
    long lockedBefore = allLockKeys();
    assertEquals(Errno.EEXIST, assertThrows(FsException.class,
        () -> b.fs().create(Vfs.ROOT, "taken", 0644, CREATE | Handle.O_EXCL, ROOT)).errno());
    assertEquals(lockedBefore, allLockKeys());
  }

  /**
   * An attempt refused because its lock session's lease is gone changed nothing: the create runs
   * again with a grant built afresh, and the lock it holds is that attempt's (its commits pass
   * the guards).
   */
  @Test
  void aCreateRefusedForItsLockSessionRunsAgainWithAFreshGrant() throws Exception {
    a.refuse = t -> t.onSuccess().stream().anyMatch(op -> op instanceof Op.Put p
        && new String(p.key(), StandardCharsets.UTF_8).startsWith(LOCKS));
    int grants = a.node.lockService.createGrants();
    writeNew(a, "again", "after a refused attempt");
    assertEquals(2, a.node.lockService.createGrants() - grants, "one grant per attempt");
    assertEquals("after a refused attempt", read(b, "again"));
  }

  /** A create whose outcome is unknown may have put its lock key: it is removed. */
  @Test
  void aCreateWithAnUnknownOutcomeLeavesNoLockBehind() throws Exception {
    long lockedBefore = allLockKeys();
    a.lose = t -> t.onSuccess().stream().anyMatch(op -> op instanceof Op.Put p
        && new String(p.key(), StandardCharsets.UTF_8).startsWith(LOCKS));
    assertEquals(Errno.EIO, assertThrows(FsException.class,
        () -> a.fs().create(Vfs.ROOT, "lost", 0644, CREATE, ROOT)).errno());
    a.lose = t -> false;
    assertEquals(lockedBefore, allLockKeys());
  }

  private void writeNew(Node n, String name, String text) throws FsException {
    OpenFile f = n.fs().create(Vfs.ROOT, name, 0644, CREATE, ROOT);
    assertEquals(text.length(), f.write(ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)),
        0));
    f.flush();
    f.release();
  }

  private static String read(Node n, String name) throws FsException {
    long ino = lookup(n, name);
    OpenFile f = n.fs().open(ino, 0, ROOT);
    try {
      ByteBuffer buf = ByteBuffer.allocate(100);
      int got = f.read(buf, 0);
      return new String(buf.array(), 0, got, StandardCharsets.UTF_8);
    } finally {
      f.release();
    }
  }

  /** A name another node created reaches this one through its watch, a moment later. */
  private static long lookup(Node n, String name) throws FsException {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (true) {
      try {
        return n.fs().lookup(Vfs.ROOT, name, ROOT).ino();
      } catch (FsException e) {
        if (e.errno() != Errno.ENOENT || System.nanoTime() > end) {
          throw e;
        }
        Thread.onSpinWait();
      }
    }
  }

  private List<KeyValue> lockKeys(long ino) {
    return fx.store.prefix(Keys.of(LOCKS + ino + "/"), 0).kvs();
  }

  private long allLockKeys() {
    return fx.store.prefix(Keys.of(LOCKS), 0).kvs().size();
  }
}

package io.etcfs.core.fs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.core.fs.meta.NameHash;
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
import io.etcfs.support.meta.ForwardingMetaStore;
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
    /** While set, commits from threads other than {@link #ungated} wait for it. */
    volatile java.util.concurrent.CountDownLatch gate;
    volatile Thread ungated;
    /** Every transaction committed through a, in order. */
    final java.util.List<Txn> seen = new java.util.concurrent.CopyOnWriteArrayList<>();

    Slow() {
      super(fx.store);
    }

    @Override
    public TxnResult commit(Txn txn) {
      commits++;
      seen.add(txn);
      java.util.concurrent.CountDownLatch g = gate;
      if (g != null && Thread.currentThread() != ungated) {
        try {
          g.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
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
    // made on b: a takes d's delegation by a burst (b gives back the one its mkdir gave it)
    d = b.fs.mkdir(Vfs.ROOT, "d", 0755, ROOT).ino();
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
    baseline();
  }

  long unlinks0;
  long creates0;

  /** What was queued before the test's own calls (a made d: it is delegated from the start). */
  void baseline() throws FsException {
    a.fs.statfs(); // commits what is queued
    unlinks0 = a.fs.stats().queuedUnlinks();
    creates0 = a.fs.stats().queuedCreates();
  }

  long queuedUnlinks() {
    return a.fs.stats().queuedUnlinks() - unlinks0;
  }

  long queuedCreates() {
    return a.fs.stats().queuedCreates() - creates0;
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
    assertEquals(200 - Delegations.TAKE_AFTER, queuedUnlinks());
    a.fs.statfs(); // waits for the queue
    assertEquals(0, entriesInStore(), "every unlink committed");
    int commits = slow.commits - before;
    assertTrue(commits <= 196 / 4, "196 unlinks in " + commits + " commits");
    assertEquals(0, TwoNodesTest.countEntries(b.fs, d));
    assertEquals(0, a.fs.stats().lostUnlinks());
  }

  /**
   * Unlinks faster than their commits: a full queue makes the next unlink wait for one batch
   * and queue it, instead of going the synchronous way (which first settles the whole queue:
   * a stall of hundreds of changes). Every unlink is queued, the queue never holds more than
   * QUEUE_MAX, and all of them commit.
   */
  @Test
  void anUnlinkThatFindsTheQueueFullWaitsForABatchAndIsQueued() throws Throwable {
    int n = Delegations.QUEUE_MAX + 150;
    delegate(n);
    slow.delayMs = 5; // commits slower than unlinks, as against etcd
    long waits = a.fs.stats().queueFullWaits();
    for (int i = Delegations.TAKE_AFTER; i < n; i++) {
      a.fs.unlink(d, "f" + i, ROOT);
    }
    assertEquals(n - Delegations.TAKE_AFTER, queuedUnlinks(), "every unlink was queued");
    assertTrue(a.fs.stats().queueFullWaits() > waits, "some found the queue full");
    a.fs.statfs(); // waits for the queue
    assertEquals(0, entriesInStore(), "every unlink committed");
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
    assertEquals(1, queuedUnlinks());
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
    assertEquals(1, queuedUnlinks());
    a.fs.statfs(); // counts what queued unlinks free
    assertEquals(used - 256, fx.allocator.usedBlocks());
  }

  /**
   * An unlink of a file's last name spends nothing on an orphan key, which only a file unlinked
   * while open has: more unlinks fit one transaction.
   */
  @Test
  void anUnlinkBatchTouchesNoOrphanKey() throws Throwable {
    delegate(40);
    int from = slow.seen.size();
    for (int i = Delegations.TAKE_AFTER; i < 40; i++) {
      a.fs.unlink(d, "f" + i, ROOT);
    }
    a.fs.statfs();
    assertEquals(0, entriesInStore());
    String orphans = new String(fx.keys.orphans(), java.nio.charset.StandardCharsets.UTF_8);
    for (Txn t : slow.seen.subList(from, slow.seen.size())) {
      for (Op op : t.onSuccess()) {
        String key = op instanceof Op.Delete del ? new String(del.key(),
            java.nio.charset.StandardCharsets.UTF_8) : "";
        assertTrue(!key.startsWith(orphans), "an orphan key deleted: " + key);
      }
    }
  }

  /** Invariant 4 for names: a node that lost the directory's lock commits none of its queue. */
  @Test
  void aLostDelegationCommitsNothingAndTheNamesStay() throws Throwable {
    delegate(10);
    // another node was granted the lock (this one's session expired) and raised its fence
    fx.raiseElsewhere(d);
    a.fs.unlink(d, "f6", ROOT);
    a.fs.statfs();
    assertEquals(1, a.fs.stats().lostUnlinks());
    assertEquals(10 - Delegations.TAKE_AFTER, entriesInStore(), "f6 stays");
    assertTrue(b.fs.lookup(d, "f6", ROOT).ino() > 0, "on b");
    assertTrue(a.fs.lookup(d, "f6", ROOT).ino() > 0, "and back on a");
  }

  /** Creates, writes and closes {@code name} in d on {@code node}, holding {@code text}. */
  static void write(FsFixture.Node node, long dir, String name, String text) throws FsException {
    OpenFile f = node.fs.create(dir, name, 0644, 2, ROOT);
    f.write(ByteBuffer.wrap(text.getBytes(java.nio.charset.StandardCharsets.UTF_8)), 0);
    f.release();
  }

  /** What {@code name} in d holds, read on {@code node}. */
  static String read(FsFixture.Node node, long dir, String name) throws FsException {
    OpenFile f = node.fs.open(node.fs.lookup(dir, name, ROOT).ino(), 0, ROOT);
    ByteBuffer buf = ByteBuffer.allocate(4096);
    int n = f.read(buf, 0);
    f.release();
    return new String(buf.array(), 0, n, java.nio.charset.StandardCharsets.UTF_8);
  }

  /** A burst of creates in d, until a holds d's delegation. */
  void delegateByCreates() throws Throwable {
    for (int i = 0; i < Delegations.TAKE_AFTER; i++) {
      write(a, d, "c" + i, "first " + i);
    }
    TwoNodesTest.eventually(() -> assertTrue(a.fs.delegated(d), "a queues creates in d"));
    baseline();
  }

  /** A directory made here is delegated from its mkdir: its first create is queued already. */
  @Test
  void aDirectoryMadeHereQueuesCreatesFromTheStart() throws Throwable {
    long e = a.fs.mkdir(Vfs.ROOT, "e", 0755, ROOT).ino();
    assertTrue(a.fs.delegated(e), "delegated with its mkdir");
    write(a, e, "first", "one");
    assertEquals(1, a.fs.stats().queuedCreates());
    assertEquals("one", read(b, e, "first"), "b looks in: a commits and gives the directory up");
    assertTrue(!a.fs.delegated(e), "given up to b's look");
  }

  /** tar x, cp -r: the creates of many new files go to etcd many in one transaction. */
  @Test
  void aBurstOfCreatesIsQueuedAndCommittedInFewTransactions() throws Throwable {
    delegateByCreates();
    slow.delayMs = 10; // creates come faster than commits, as in tar x against etcd
    int before = slow.commits;
    java.util.List<OpenFile> files = new java.util.ArrayList<>();
    for (int i = 0; i < 100; i++) {
      OpenFile f = a.fs.create(d, "n" + i, 0644, 2, ROOT);
      f.write(ByteBuffer.wrap(("file " + i).getBytes(java.nio.charset.StandardCharsets.UTF_8)),
          0);
      files.add(f); // FUSE's RELEASE comes after close(2) returned: tar does not wait for it
    }
    for (OpenFile f : files) {
      f.release();
    }
    assertEquals(100, queuedCreates());
    a.fs.statfs(); // waits for the queue
    assertEquals(Delegations.TAKE_AFTER + 100, entriesInStore(), "every create committed");
    int commits = slow.commits - before;
    // each file's data is one commit (at its release); its create rides with others
    assertTrue(commits <= 100 + 100 / 4, "100 new files in " + commits + " commits");
    for (int i = 0; i < 100; i += 7) {
      assertEquals("file " + i, read(b, d, "n" + i), "n" + i + " on b");
    }
    assertEquals(0, a.fs.stats().lostCreates());
  }

  /**
   * tar's way: each file created, written, chmod-ed and closed before the next. The release
   * comes before the file's create is committed, so the create carries the data, size and
   * attributes: a few transactions for all the files, nothing for their releases, and the lock
   * granted clean, so another node states every file without a recall.
   */
  @Test
  void filesClosedBeforeTheirCreateCommitsAreCommittedWithIt() throws Throwable {
    delegateByCreates();
    slow.delayMs = 10;
    int before = slow.commits;
    long carried0 = a.fs.stats().carriedCreates();
    for (int i = 0; i < 100; i++) {
      OpenFile f = a.fs.create(d, "t" + i, 0600, 2, ROOT);
      byte[] bytes = ("file " + i + " ").repeat(i * 50 + 1)
          .getBytes(java.nio.charset.StandardCharsets.UTF_8); // up to 8 blocks
      f.write(ByteBuffer.wrap(bytes), 0);
      a.fs.setattr(f.ino(), io.etcfs.spi.vfs.SetAttr.mode(0644), ROOT);
      f.release();
    }
    a.fs.statfs(); // waits for the queue
    int commits = slow.commits - before;
    assertTrue(commits <= 100 / 4, "100 files written in " + commits + " commits");
    assertTrue(a.fs.stats().carriedCreates() - carried0 >= 90,
        (a.fs.stats().carriedCreates() - carried0) + " of 100 creates carried their data");
    b.fs.lookup(d, "t0", ROOT); // recalls d's delegation: the one recall
    long recalls = a.fs.stats().recalls();
    for (int i = 0; i < 100; i++) {
      Attr attr = b.fs.getattr(b.fs.lookup(d, "t" + i, ROOT).ino());
      assertEquals(("file " + i + " ").repeat(i * 50 + 1).length(), attr.size(),
          "t" + i + "'s size on b");
      assertEquals(Attr.S_IFREG | 0644, attr.mode(), "t" + i + "'s mode on b");
    }
    assertEquals(recalls, a.fs.stats().recalls(), "b stated every file without a recall");
    for (int i = 0; i < 100; i++) {
      String want = ("file " + i + " ").repeat(i * 50 + 1);
      OpenFile r = b.fs.open(b.fs.lookup(d, "t" + i, ROOT).ino(), 0, ROOT);
      ByteBuffer buf = ByteBuffer.allocate(want.length() + 1);
      int n = r.read(buf, 0);
      r.release();
      assertEquals(want, new String(buf.array(), 0, n, java.nio.charset.StandardCharsets.UTF_8),
          "t" + i + " on b");
    }
    assertEquals(0, a.fs.stats().lostCreates());
  }

  /**
   * tar x makes a directory in one it is filling: the mkdir commits at once, beside the creates
   * queued there, not after them (one round trip, not two), and everything ends up as if in
   * order. A mkdir of a name whose unlink is queued still waits for it.
   */
  @Test
  void aDirectoryMadeBesideQueuedCreatesCommitsAtOnce() throws Throwable {
    delegateByCreates();
    java.util.concurrent.CountDownLatch gate = new java.util.concurrent.CountDownLatch(1);
    slow.ungated = Thread.currentThread();
    slow.gate = gate; // the queue's commits wait; this thread's do not
    try {
      for (int i = 0; i < 5; i++) {
        write(a, d, "q" + i, "queued " + i);
      }
      long sub = a.fs.mkdir(d, "sub", 0755, ROOT).ino();
      assertTrue(fx.store.get(fx.keys.dirent(d, NameHash.of("sub"), "sub")).isPresent(),
          "the mkdir committed");
      assertTrue(fx.store.get(fx.keys.dirent(d, NameHash.of("q0"), "q0")).isEmpty(),
          "while the creates before it are still queued");
      write(a, sub, "inside", "in sub");
    } finally {
      gate.countDown();
      slow.gate = null;
    }
    a.fs.statfs(); // waits for the queues
    for (int i = 0; i < 5; i++) {
      assertEquals("queued " + i, read(b, d, "q" + i), "q" + i + " on b");
    }
    long sub = b.fs.lookup(d, "sub", ROOT).ino();
    assertEquals("in sub", read(b, sub, "inside"));
    assertEquals(3, b.fs.getattr(d).nlink(), "d's link count counts sub");
    // an unlink of the name queued: the mkdir follows it
    write(a, d, "x", "file");
    a.fs.statfs();
    a.fs.unlink(d, "x", ROOT);
    long x = a.fs.mkdir(d, "x", 0755, ROOT).ino();
    // b learns of a's names through its metadata watch, a moment later (ARCHITECTURE, "Caches":
    // a look-up is as current as the watch for another node's changes); asserted at once, the
    // watch's lag failed this test about one run in ten
    TwoNodesTest.eventually(() -> assertEquals(x, b.fs.lookup(d, "x", ROOT).ino()));
    assertEquals(Attr.S_IFDIR, b.fs.getattr(x).mode() & Attr.S_IFMT);
    assertEquals(0, a.fs.stats().lostCreates());
  }

  /**
   * chown, a member's chgrp and chmod coming while the file's create is queued, in the commit
   * in flight, or just after it, with its release carried or not, while another thread stats
   * the file: none of them is lost, and no stat begun after the chown answered shows the first
   * owner (PosixConformanceIT's supplementary-groups case once saw the kernel refuse the new
   * owner a write: a stat had paired the queued record with a buffer just committed).
   */
  @Test
  void ownerAndModeChangedAroundACarriedCreateStick() throws Throwable {
    long e = a.fs.mkdir(Vfs.ROOT, "e", 0777, ROOT).ino();
    Caller nobody = new Caller(65534, 65534, 1, java.util.List.of(65533, 65532));
    java.util.Random random = new java.util.Random(7);
    java.util.concurrent.atomic.AtomicLong watched = new java.util.concurrent.atomic.AtomicLong();
    java.util.concurrent.atomic.AtomicBoolean owned = new java.util.concurrent.atomic.AtomicBoolean();
    java.util.List<String> wrong = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
    java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
    Thread stats = new Thread(() -> {
      while (!done.get()) {
        long ino = watched.get();
        boolean after = owned.get();
        try {
          Attr at = a.fs.getattr(ino);
          if (after && at.ino() == watched.get() && at.uid() != 65534) {
            wrong.add("inode " + ino + " uid " + at.uid());
          }
        } catch (FsException ignored) {
          // not made yet
        }
      }
    });
    stats.start();
    try {
      for (int i = 0; i < 60; i++) {
        slow.delayMs = random.nextInt(3) * 5;
        OpenFile f = a.fs.create(e, "g" + i, 0644, 2, ROOT);
        owned.set(false);
        watched.set(f.ino());
        f.write(ByteBuffer.wrap(new byte[] {'x'}), 0);
        boolean closeFirst = random.nextBoolean();
        if (closeFirst) {
          f.release();
        }
        Thread.sleep(random.nextInt(25));
        a.fs.setattr(f.ino(), io.etcfs.spi.vfs.SetAttr.owner(65534, 65533), ROOT);
        owned.set(true);
        a.fs.setattr(f.ino(), io.etcfs.spi.vfs.SetAttr.owner(null, 65532), nobody);
        Thread.sleep(random.nextInt(10));
        a.fs.setattr(f.ino(), io.etcfs.spi.vfs.SetAttr.mode(02775), ROOT);
        if (!closeFirst) {
          f.release();
        }
        Attr here = a.fs.getattr(f.ino());
        assertEquals(java.util.List.of(65534, 65532, Attr.S_IFREG | 02775),
            java.util.List.of(here.uid(), here.gid(), here.mode()), "g" + i + " on a");
        Thread.sleep(random.nextInt(60)); // the queue commits meanwhile, or not yet
      }
    } finally {
      done.set(true);
      stats.join();
    }
    assertEquals(java.util.List.of(), wrong, "stats after the chown that showed the first owner");
    a.fs.statfs(); // waits for the queue
    for (int i = 0; i < 60; i++) {
      Attr there = b.fs.getattr(b.fs.lookup(e, "g" + i, ROOT).ino());
      assertEquals(java.util.List.of(65534, 65532, Attr.S_IFREG | 02775),
          java.util.List.of(there.uid(), there.gid(), there.mode()), "g" + i + " on b");
    }
  }

  /**
   * tar restores each directory's owner, mode and times after filling it, while the creates in
   * it may still be queued: where the directory is delegated here the three are answered from
   * its queue (none waits for etcd), seen here at once, and seen on b as soon as b looks (its
   * stat recalls the delegation); the creates' blind time writes before them do not land on
   * top of the times set.
   */
  @Test
  void aDirectorysOwnModeOwnerAndTimesAreQueued() throws Throwable {
    delegateByCreates();
    slow.delayMs = 20;
    for (int i = 0; i < 10; i++) {
      write(a, d, "s" + i, "file " + i);
    }
    long then = 1_000_000_000L * 1_400_000_000L;
    a.fs.setattr(d, io.etcfs.spi.vfs.SetAttr.owner(1000, 1000), ROOT);
    a.fs.setattr(d, io.etcfs.spi.vfs.SetAttr.mode(0750), ROOT);
    Attr set = a.fs.setattr(d, io.etcfs.spi.vfs.SetAttr.times(then, then), ROOT);
    assertEquals(3, a.fs.stats().queuedSetattrs(), "the three were answered from the queue");
    for (Attr got : new Attr[] {set, a.fs.getattr(d), a.fs.lookup(Vfs.ROOT, "d", ROOT)}) {
      assertEquals(Attr.S_IFDIR | 0750, got.mode(), "d's mode here");
      assertEquals(1000, got.uid(), "d's owner here");
      assertEquals(then, got.mtimeNs(), "d's mtime here");
    }
    Attr onB = b.fs.getattr(d);
    assertEquals(Attr.S_IFDIR | 0750, onB.mode(), "d's mode on b");
    assertEquals(1000, onB.uid(), "d's owner on b");
    assertEquals(1000, onB.gid(), "d's group on b");
    assertEquals(then, onB.atimeNs(), "d's atime on b");
    assertEquals(then, onB.mtimeNs(), "d's mtime on b");
    for (int i = 0; i < 10; i++) {
      assertEquals("file " + i, read(b, d, "s" + i), "s" + i + " on b");
    }
    assertEquals(then, a.fs.getattr(d).mtimeNs(), "d's mtime here after the commit");
  }

  /** A name created after an explicit modification time moves it on, as everywhere else. */
  @Test
  void aDirectorysTimeSetBeforeAQueuedCreateMovesOn() throws Throwable {
    delegateByCreates();
    slow.delayMs = 20;
    long then = 1_000_000_000L * 1_400_000_000L;
    a.fs.setattr(d, io.etcfs.spi.vfs.SetAttr.times(then, then), ROOT);
    a.fs.setattr(d, io.etcfs.spi.vfs.SetAttr.mode(0700), ROOT); // queued after: keeps no time
    write(a, d, "later", "x");
    a.fs.setattr(d, io.etcfs.spi.vfs.SetAttr.mode(0711), ROOT);
    assertEquals(3, a.fs.stats().queuedSetattrs());
    a.fs.statfs();
    long now = System.currentTimeMillis() * 1_000_000L;
    for (Attr got : new Attr[] {a.fs.getattr(d), b.fs.getattr(d)}) {
      assertTrue(got.mtimeNs() > now - TimeUnit.MINUTES.toNanos(1),
          "the create after the utimens set d's mtime: " + got.mtimeNs());
      assertEquals(then, got.atimeNs(), "d's atime stays as set");
      assertEquals(Attr.S_IFDIR | 0711, got.mode(), "d's mode");
    }
  }

  /** A queued change is checked as the synchronous one: not the owner, EPERM, nothing queued. */
  @Test
  void aQueuedChmodOfAnotherUsersDirectoryIsRefused() throws Throwable {
    delegateByCreates();
    Caller someone = new Caller(1234, 1234, 0, java.util.List.of());
    assertEquals(Errno.EPERM, assertThrows(FsException.class,
        () -> a.fs.setattr(d, io.etcfs.spi.vfs.SetAttr.mode(0777), someone)).errno());
    assertEquals(0, a.fs.stats().queuedSetattrs());
    assertEquals(Attr.S_IFDIR | 0755, a.fs.getattr(d).mode());
    assertEquals(Attr.S_IFDIR | 0755, b.fs.getattr(d).mode());
  }

  /**
   * A directory's attribute changes queued under a delegation that is lost are not committed:
   * the directory keeps what it had, here as on b (as a writer's buffer is lost with its lock).
   */
  @Test
  void aLostDelegationCommitsNoneOfItsQueuedAttributeChanges() throws Throwable {
    delegateByCreates();
    slow.delayMs = 200;
    a.fs.setattr(d, io.etcfs.spi.vfs.SetAttr.mode(0700), ROOT);
    assertEquals(Attr.S_IFDIR | 0700, a.fs.getattr(d).mode(), "seen here at once");
    fx.raiseElsewhere(d);
    slow.delayMs = 0;
    a.fs.statfs();
    assertEquals(Attr.S_IFDIR | 0755, b.fs.getattr(d).mode(), "on b");
    TwoNodesTest.eventually(() -> assertEquals(Attr.S_IFDIR | 0755, a.fs.getattr(d).mode(),
        "here, once the change is known lost"));
  }

  /**
   * Until its queued create commits no other node knows a file, so its attributes change only
   * here: the kernel may keep them (a stat right after a create is the kernel's), and its pages,
   * under a cache grant the adopted lock continues (nobody else could write in between), so the
   * pages are still good after the commit. Dropped unadopted (the create lost), the kernel is
   * told to drop its attributes, and nothing may be cached any more.
   */
  @Test
  void aQueuedCreatesAttributesMayBeKeptAndAreDroppedIfItIsLost() throws Throwable {
    java.util.List<Long> dropped = new java.util.concurrent.CopyOnWriteArrayList<>();
    a.fs.setKernelCache(new io.etcfs.spi.vfs.KernelCache() {
      @Override
      public void entryChanged(long dir, String name) {}

      @Override
      public void inodeChanged(long ino) {}

      @Override
      public void lockGoing(long ino, boolean writeBack) {
        dropped.add(ino);
      }
    });
    delegateByCreates();
    slow.gate = new java.util.concurrent.CountDownLatch(1); // the queue cannot commit yet
    OpenFile kept = a.fs.create(d, "kept", 0644, 2, ROOT);
    assertTrue(a.fs.attributesCacheable(kept.ino()), "queued: only a knows the file");
    long queued = a.fs.cacheGrant(kept.ino());
    assertTrue(queued != 0 && queued != -1, "pages may be cached under the provisional lock");
    kept.release();
    slow.gate.countDown();
    slow.gate = null;
    a.fs.statfs(); // settles the queue
    assertTrue(a.fs.attributesCacheable(kept.ino()), "adopted with its create");
    assertEquals(queued, a.fs.cacheGrant(kept.ino()), "the adopted grant continues it");
    OpenFile read = b.fs.open(kept.ino(), 0, ROOT); // b's lock: a's goes
    read.release();
    OpenFile again = a.fs.open(kept.ino(), 2, ROOT);
    again.write(ByteBuffer.wrap(new byte[] {1}), 0); // a's exclusive lock, a new grant
    long regranted = a.fs.cacheGrant(again.ino());
    assertTrue(regranted != 0 && regranted != queued, "after another node's grant: a new one");
    again.release();

    slow.delayMs = 200; // the create is still queued when the directory's lock goes
    OpenFile lost = a.fs.create(d, "lost", 0644, 2, ROOT);
    assertTrue(a.fs.attributesCacheable(lost.ino()));
    fx.raiseElsewhere(d);
    slow.delayMs = 0;
    a.fs.statfs();
    assertEquals(1, a.fs.stats().lostCreates());
    assertTrue(dropped.contains(lost.ino()), "the kernel drops what it kept: " + dropped);
    assertEquals(0, a.fs.cacheGrant(lost.ino()), "no page either");
  }

  /**
   * A create that carries its file's data and cannot commit (the directory's lock lost): the
   * file is gone with its data, and the blocks its data was written to are free again.
   */
  @Test
  void aLostCreateCarryingDataGivesItsBlocksBack() throws Throwable {
    delegateByCreates();
    slow.delayMs = 200; // the release comes before the create commits
    long free = a.fs.statfs().freeBlocks();
    OpenFile f = a.fs.create(d, "gone", 0644, 2, ROOT);
    f.write(ByteBuffer.wrap(new byte[40_000]), 0);
    f.release();
    fx.raiseElsewhere(d);
    slow.delayMs = 0;
    a.fs.statfs();
    assertEquals(1, a.fs.stats().lostCreates());
    assertEquals(Errno.ENOENT, assertThrows(FsException.class,
        () -> b.fs.lookup(d, "gone", ROOT)).errno());
    TwoNodesTest.eventually(() -> assertEquals(free, a.fs.statfs().freeBlocks(),
        "the lost file's blocks are free"));
  }

  /**
   * A queued create answers at once and shows here at once; another node sees it as soon as it
   * looks (the look-up recalls the delegation: a commits first), with the bytes written to it
   * and not committed (the read recalls the file's lock, which the create granted a).
   */
  @Test
  void aQueuedCreateShowsHereAtOnceAndElsewhereThroughTheRecall() throws Throwable {
    delegateByCreates();
    slow.delayMs = 200;
    OpenFile f = a.fs.create(d, "q", 0640, 2, ROOT);
    assertEquals(1, queuedCreates());
    assertEquals(Delegations.TAKE_AFTER, entriesInStore(), "not committed yet");
    assertEquals(f.ino(), a.fs.lookup(d, "q", ROOT).ino());
    assertEquals(Attr.S_IFREG | 0640, a.fs.getattr(f.ino()).mode());
    f.write(ByteBuffer.wrap("queued".getBytes(java.nio.charset.StandardCharsets.UTF_8)), 0);
    assertEquals(6, a.fs.getattr(f.ino()).size());
    assertEquals(Errno.EEXIST, assertThrows(FsException.class,
        () -> a.fs.mknod(d, "q", FILE, 0, ROOT)).errno(), "the name is taken here");
    slow.delayMs = 0;
    assertEquals("queued", read(b, d, "q"), "b sees the file and its bytes");
    assertEquals(0640, b.fs.getattr(f.ino()).mode() & 07777);
    f.release();
  }

  /** fsync(2) of a file whose create is queued commits the create first, then its data. */
  @Test
  void fsyncOfAQueuedFileCommitsItsCreateAndItsData() throws Throwable {
    delegateByCreates();
    slow.delayMs = 50;
    OpenFile f = a.fs.create(d, "s", 0644, 2, ROOT);
    f.write(ByteBuffer.wrap(new byte[10_000]), 0);
    f.fsync(false);
    byte[] key = fx.keys.inode(f.ino());
    assertEquals(10_000, Records.inode(fx.store.get(key), f.ino())
        .size(), "the size is committed");
    assertEquals(Delegations.TAKE_AFTER + 1, entriesInStore());
    f.release();
  }

  /**
   * Invariant 4 for creates: a node that lost the directory's lock commits none of its queue;
   * the file it answered is gone (as a buffered write is lost with its lock), on both nodes, and
   * its close reports the failure.
   */
  @Test
  void aLostDelegationCommitsNoQueuedCreate() throws Throwable {
    delegateByCreates();
    fx.raiseElsewhere(d);
    OpenFile f = a.fs.create(d, "lost", 0644, 2, ROOT);
    f.write(ByteBuffer.wrap(new byte[100]), 0);
    a.fs.statfs();
    assertEquals(1, a.fs.stats().lostCreates());
    assertEquals(Delegations.TAKE_AFTER, entriesInStore());
    assertEquals(Errno.ENOENT, assertThrows(FsException.class,
        () -> a.fs.lookup(d, "lost", ROOT)).errno());
    assertEquals(Errno.ENOENT, assertThrows(FsException.class,
        () -> b.fs.lookup(d, "lost", ROOT)).errno());
    assertThrows(FsException.class, f::release, "the close says its data was not committed");
  }

  /**
   * git's way of writing an object — a temporary file created, written and closed, linked to
   * the object's name, the temporary unlinked — and mv of a new file within its directory: while
   * the file's create is queued, each amends it, with no transaction of its own, and the create
   * makes the final names only.
   */
  @Test
  void linksRenamesAndUnlinksOfAQueuedCreateAmendIt() throws Throwable {
    delegateByCreates();
    java.util.concurrent.CountDownLatch gate = new java.util.concurrent.CountDownLatch(1);
    slow.ungated = Thread.currentThread();
    long links0 = a.fs.stats().queuedLinks();
    int before = slow.commits;
    slow.gate = gate; // the queue's commits wait; this thread's would not
    long tmp;
    try {
      write(a, d, "pilot", "in flight");
      // once the pilot's commit waits at the gate, what follows stays queued behind it
      TwoNodesTest.eventually(() -> assertTrue(slow.commits > before, "the pilot's commit"));
      int held = slow.commits;
      write(a, d, "tmp_obj", "object");
      tmp = a.fs.lookup(d, "tmp_obj", ROOT).ino();
      Attr linked = a.fs.link(tmp, d, "ab12", ROOT);
      assertEquals(2, linked.nlink());
      assertEquals(6, linked.size(), "the buffered size");
      assertEquals(tmp, a.fs.lookup(d, "ab12", ROOT).ino());
      a.fs.unlink(d, "tmp_obj", ROOT);
      assertEquals(Errno.ENOENT, assertThrows(FsException.class,
          () -> a.fs.lookup(d, "tmp_obj", ROOT)).errno());
      assertEquals(1, a.fs.getattr(tmp).nlink());
      write(a, d, "new.txt", "renamed");
      a.fs.rename(d, "new.txt", d, "final.txt", ROOT);
      assertEquals(Errno.ENOENT, assertThrows(FsException.class,
          () -> a.fs.lookup(d, "new.txt", ROOT)).errno());
      assertEquals(a.fs.lookup(d, "final.txt", ROOT).ino(), a.fs.getattr(
          a.fs.lookup(d, "final.txt", ROOT).ino()).ino());
      assertEquals(held, slow.commits, "no transaction of their own");
      assertEquals(3, a.fs.stats().queuedLinks() - links0);
    } finally {
      gate.countDown();
      slow.gate = null;
    }
    a.fs.statfs(); // waits for the queue
    assertEquals("renamed", read(a, d, "final.txt"));
    assertEquals("object", read(b, d, "ab12"));
    assertEquals(1, b.fs.getattr(tmp).nlink());
    assertEquals("renamed", read(b, d, "final.txt"));
    for (String gone : new String[] {"tmp_obj", "new.txt"}) {
      assertEquals(Errno.ENOENT, assertThrows(FsException.class,
          () -> b.fs.lookup(d, gone, ROOT)).errno(), gone + " on b");
    }
    assertTrue(fx.store.get(fx.keys.dirent(d, NameHash.of("tmp_obj"), "tmp_obj")).isEmpty());
    assertEquals(0, a.fs.stats().lostCreates());
    // a name taken: the synchronous way answers EEXIST, and both files stay as they were
    write(a, d, "other", "other");
    long other = a.fs.lookup(d, "other", ROOT).ino();
    assertEquals(Errno.EEXIST, assertThrows(FsException.class,
        () -> a.fs.link(other, d, "ab12", ROOT)).errno());
    assertEquals("object", read(b, d, "ab12"));
    assertEquals(1, b.fs.getattr(other).nlink());
  }

  /** An unlink of a name whose create is queued waits for it: both commit, in order. */
  @Test
  void anUnlinkOfAQueuedCreateCommitsTheCreateFirst() throws Throwable {
    delegateByCreates();
    slow.delayMs = 50;
    write(a, d, "u", "soon gone");
    a.fs.unlink(d, "u", ROOT);
    assertEquals(Errno.ENOENT, assertThrows(FsException.class,
        () -> a.fs.lookup(d, "u", ROOT)).errno());
    a.fs.statfs();
    assertEquals(Delegations.TAKE_AFTER, entriesInStore());
    assertEquals(Errno.ENOENT, assertThrows(FsException.class,
        () -> b.fs.lookup(d, "u", ROOT)).errno());
  }
}

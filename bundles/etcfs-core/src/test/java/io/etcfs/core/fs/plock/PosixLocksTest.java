package io.etcfs.core.fs.plock;

import static io.etcfs.spi.vfs.PosixLock.EOF;
import static io.etcfs.spi.vfs.PosixLock.Type.READ;
import static io.etcfs.spi.vfs.PosixLock.Type.UNLOCK;
import static io.etcfs.spi.vfs.PosixLock.Type.WRITE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.core.fs.meta.FsKeys;
import io.etcfs.spi.fencing.Membership;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.RangeResult;
import io.etcfs.spi.meta.Txn;
import io.etcfs.spi.meta.Watch;
import io.etcfs.spi.meta.WatchListener;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.PosixLock;
import io.etcfs.spi.vfs.Vfs;
import io.etcfs.support.meta.ForwardingMetaStore;
import io.etcfs.testing.MemoryMetaStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * fcntl and flock locks between owners and nodes on the in-memory store: every node is its own
 * {@link PosixLocks} with its own lease, as on separate machines.
 */
@Timeout(60)
class PosixLocksTest {
  static final long INO = 0x42;
  static final FsKeys KEYS = new FsKeys("t");
  static final BooleanSupplier NEVER = () -> false;

  final MemoryMetaStore store = new MemoryMetaStore();
  /** Counts reads and watches, so tests can tell a waiter is waiting and an unlock is free. */
  final AtomicInteger ranges = new AtomicInteger();
  final Semaphore watches = new Semaphore(0);
  final MetaStore counting = new ForwardingMetaStore(store) {
    @Override
    public RangeResult range(byte[] from, byte[] to, int limit) {
      ranges.incrementAndGet();
      return super.range(from, to, limit);
    }

    @Override
    public Watch watch(byte[] prefix, long fromRevision, WatchListener listener) {
      Watch w = super.watch(prefix, fromRevision, listener);
      watches.release();
      return w;
    }
  };
  final List<PosixLocks> nodes = new ArrayList<>();
  final ExecutorService pool = Executors.newCachedThreadPool();

  @AfterEach
  void tearDown() {
    pool.shutdownNow();
    nodes.forEach(PosixLocks::close);
    store.close();
  }

  /** A node with its own membership key and lock lease. */
  final class Node implements Membership {
    final String name;
    final long generation;
    final AtomicBoolean fenced = new AtomicBoolean();

    Node(String name) {
      this.name = name;
      store.commit(new Txn().then(Op.put(memberKey(), Keys.of("test"))));
      this.generation = store.get(memberKey()).orElseThrow().createRevision();
    }

    @Override
    public String nodeName() {
      return name;
    }

    @Override
    public byte[] memberKey() {
      return KEYS.member(name);
    }

    @Override
    public long generation() {
      return generation;
    }

    @Override
    public boolean isFenced() {
      return fenced.get();
    }

    @Override
    public CompletionStage<Void> done() {
      return new CompletableFuture<>();
    }
  }

  PosixLocks node(String name, Duration wait) {
    PosixLocks p = new PosixLocks(counting, KEYS, new Node(name), wait);
    nodes.add(p);
    return p;
  }

  PosixLocks node(String name) {
    return node(name, Duration.ofSeconds(30));
  }

  static PosixLock lock(PosixLock.Type type, long start, long end) {
    return new PosixLock(type, start, end, 100);
  }

  static int errno(ThrowingCall call) {
    return assertThrows(FsException.class, call::run).errno();
  }

  interface ThrowingCall {
    void run() throws FsException;
  }

  @Test
  void readLocksOfTwoNodesCoexistAndAWriteLockConflictsWithBoth() throws Exception {
    PosixLocks a = node("a");
    PosixLocks b = node("b");
    a.setlk(INO, 1, lock(READ, 0, 99), false, NEVER);
    b.setlk(INO, 1, lock(READ, 50, 149), false, NEVER);
    assertEquals(Errno.EAGAIN, errno(() -> a.setlk(INO, 1, lock(WRITE, 120, 130), false, NEVER)));
    assertEquals(Errno.EAGAIN, errno(() -> b.setlk(INO, 2, lock(WRITE, 0, 0), false, NEVER)));
    a.setlk(INO, 1, lock(WRITE, 0, 49), false, NEVER); // only its own read lock overlaps: upgraded
    assertEquals(Errno.EAGAIN, errno(() -> b.setlk(INO, 1, lock(READ, 49, 49), false, NEVER)));
    b.setlk(INO, 1, lock(READ, 150, EOF), false, NEVER);
  }

  @Test
  void twoOwnersOnOneNodeConflictAsOnTwoNodes() throws Exception {
    PosixLocks a = node("a");
    a.setlk(INO, 1, lock(WRITE, 0, EOF), false, NEVER);
    assertEquals(Errno.EAGAIN, errno(() -> a.setlk(INO, 2, lock(READ, 10, 10), false, NEVER)));
    a.setlk(INO + 1, 2, lock(WRITE, 0, EOF), false, NEVER); // another inode
  }

  @Test
  void getlkReportsTheConflictingRangeWithThePidOnlyOfLocalHolders() throws Exception {
    PosixLocks a = node("a");
    PosixLocks b = node("b");
    a.setlk(INO, 1, new PosixLock(WRITE, 10, 19, 4321), false, NEVER);
    assertEquals(new PosixLock(WRITE, 10, 19, 0), b.getlk(INO, 1, lock(READ, 0, EOF)),
        "a pid of another node would name an unrelated local process");
    assertEquals(new PosixLock(WRITE, 10, 19, 4321), a.getlk(INO, 2, lock(READ, 15, 15)));
    assertEquals(PosixLock.none(20, EOF), b.getlk(INO, 1, lock(WRITE, 20, EOF)));
    assertEquals(PosixLock.Type.UNLOCK, a.getlk(INO, 1, lock(WRITE, 0, EOF)).type(),
        "the owner's own lock is no conflict");
    b.setlk(INO, 7, new PosixLock(READ, 30, 39, 55), false, NEVER);
    assertEquals(new PosixLock(READ, 30, 39, 0), a.getlk(INO, 1, lock(WRITE, 20, EOF)));
    assertEquals(PosixLock.Type.UNLOCK, a.getlk(INO, 1, lock(READ, 20, EOF)).type());
  }

  @Test
  void unlockOfASubRangeFreesOnlyThatRange() throws Exception {
    PosixLocks a = node("a");
    PosixLocks b = node("b");
    a.setlk(INO, 1, lock(WRITE, 0, 99), false, NEVER);
    a.setlk(INO, 1, lock(UNLOCK, 40, 59), false, NEVER);
    b.setlk(INO, 1, lock(WRITE, 40, 59), false, NEVER);
    assertEquals(Errno.EAGAIN, errno(() -> b.setlk(INO, 1, lock(WRITE, 39, 39), false, NEVER)));
    assertEquals(Errno.EAGAIN, errno(() -> b.setlk(INO, 1, lock(WRITE, 60, 60), false, NEVER)));
    assertEquals(new PosixLock(WRITE, 60, 99, 0), b.getlk(INO, 1, lock(READ, 60, EOF)));
  }

  @Test
  void aBlockedSetlkwIsWokenByTheHoldersUnlock() throws Exception {
    PosixLocks a = node("a");
    PosixLocks b = node("b");
    a.setlk(INO, 1, lock(WRITE, 0, EOF), false, NEVER);
    Future<?> waiter = pool.submit(() -> {
      b.setlk(INO, 1, lock(WRITE, 100, 199), true, NEVER);
      return null;
    });
    assertTrue(watches.tryAcquire(10, TimeUnit.SECONDS), "the waiter watches the table");
    assertFalse(waiter.isDone());
    a.setlk(INO, 1, lock(UNLOCK, 0, EOF), false, NEVER);
    waiter.get(10, TimeUnit.SECONDS); // well inside the 30 s bound: woken, not timed out
    assertEquals(new PosixLock(WRITE, 100, 199, 0), a.getlk(INO, 2, lock(READ, 0, EOF)));
  }

  @Test
  void aWaitEndsWithEnolckAtTheBoundAndTheLockIsObtainableAfter() throws Exception {
    PosixLocks a = node("a");
    PosixLocks b = node("b", Duration.ofMillis(300));
    a.setlk(INO, 1, lock(READ, 0, 0), false, NEVER);
    long t0 = System.nanoTime();
    assertEquals(Errno.ENOLCK, errno(() -> b.setlk(INO, 1, lock(WRITE, 0, 0), true, NEVER)));
    assertTrue(System.nanoTime() - t0 >= TimeUnit.MILLISECONDS.toNanos(300));
    a.flock(INO, 1, Vfs.LOCK_EX, NEVER);
    assertEquals(Errno.ENOLCK, errno(() -> b.flock(INO, 1, Vfs.LOCK_SH, NEVER)));
    a.setlk(INO, 1, lock(UNLOCK, 0, EOF), false, NEVER);
    b.setlk(INO, 1, lock(WRITE, 0, 0), true, NEVER);
  }

  @Test
  void anInterruptedCallerStopsWaitingWithEintrLongBeforeTheBound() throws Exception {
    PosixLocks a = node("a");
    PosixLocks b = node("b", Duration.ofSeconds(30));
    a.setlk(INO, 1, lock(WRITE, 0, EOF), false, NEVER);
    a.flock(INO, 1, Vfs.LOCK_EX, NEVER);
    AtomicBoolean signalled = new AtomicBoolean();
    Future<Integer> fcntl = pool.submit(() -> errno(
        () -> b.setlk(INO, 1, lock(READ, 0, 0), true, signalled::get)));
    Future<Integer> flock = pool.submit(() -> errno(
        () -> b.flock(INO, 1, Vfs.LOCK_SH, signalled::get)));
    assertTrue(watches.tryAcquire(2, 10, TimeUnit.SECONDS), "both wait on a watch");
    signalled.set(true);
    assertEquals(Errno.EINTR, fcntl.get(10, TimeUnit.SECONDS));
    assertEquals(Errno.EINTR, flock.get(10, TimeUnit.SECONDS));
  }

  @Test
  void aNodesLocksAreGoneWhenItsLeaseExpires() throws Exception {
    PosixLocks a = node("a");
    PosixLocks b = node("b");
    a.setlk(INO, 1, lock(WRITE, 0, EOF), false, NEVER);
    a.flock(INO, 1, Vfs.LOCK_EX, NEVER);
    Future<?> waiter = pool.submit(() -> {
      b.setlk(INO, 1, lock(WRITE, 0, EOF), true, NEVER);
      return null;
    });
    assertTrue(watches.tryAcquire(10, TimeUnit.SECONDS));
    store.expireLease(leaseOf(KEYS.posixLocks(INO)));
    waiter.get(10, TimeUnit.SECONDS);
    b.flock(INO, 1, Vfs.LOCK_EX | Vfs.LOCK_NB, NEVER);
    // a's next lock takes a new lease
    a.setlk(INO + 1, 1, lock(WRITE, 0, EOF), false, NEVER);
    assertEquals(Errno.EAGAIN, errno(() -> b.setlk(INO + 1, 1, lock(READ, 0, 0), false, NEVER)));
  }

  private long leaseOf(byte[] table) {
    for (KeyValue kv : store.prefix(table, 0).kvs()) {
      if (kv.lease() != 0) {
        return kv.lease();
      }
    }
    throw new AssertionError("no lock key under a lease in " + new String(table));
  }

  @Test
  void flockSharedLocksCoexistAndExclusiveOnesExclude() throws Exception {
    PosixLocks a = node("a");
    PosixLocks b = node("b");
    a.flock(INO, 1, Vfs.LOCK_SH, NEVER);
    b.flock(INO, 1, Vfs.LOCK_SH | Vfs.LOCK_NB, NEVER);
    assertEquals(Errno.EAGAIN, errno(() -> b.flock(INO, 2, Vfs.LOCK_EX | Vfs.LOCK_NB, NEVER)));
    a.flock(INO, 1, Vfs.LOCK_UN, NEVER);
    b.flock(INO, 1, Vfs.LOCK_EX | Vfs.LOCK_NB, NEVER); // its own shared lock converted
    assertEquals(Errno.EAGAIN, errno(() -> a.flock(INO, 1, Vfs.LOCK_SH | Vfs.LOCK_NB, NEVER)));
    assertEquals(Errno.EINVAL, errno(() -> a.flock(INO, 1, 3, NEVER)));
  }

  @Test
  void aFlockConversionThatMustWaitLetsGoOfTheOldLockFirstAsLinuxDoes() throws Exception {
    PosixLocks a = node("a");
    PosixLocks b = node("b");
    a.flock(INO, 1, Vfs.LOCK_SH, NEVER);
    b.flock(INO, 1, Vfs.LOCK_SH, NEVER);
    assertEquals(Errno.EAGAIN, errno(() -> a.flock(INO, 1, Vfs.LOCK_EX | Vfs.LOCK_NB, NEVER)));
    b.flock(INO, 1, Vfs.LOCK_EX | Vfs.LOCK_NB, NEVER); // a no longer holds its shared lock
  }

  @Test
  void aBlockedFlockIsWokenByTheHoldersUnlock() throws Exception {
    PosixLocks a = node("a");
    PosixLocks b = node("b");
    a.flock(INO, 1, Vfs.LOCK_EX, NEVER);
    Future<?> waiter = pool.submit(() -> {
      b.flock(INO, 1, Vfs.LOCK_SH, NEVER);
      return null;
    });
    assertTrue(watches.tryAcquire(10, TimeUnit.SECONDS));
    a.flock(INO, 1, Vfs.LOCK_UN, NEVER);
    waiter.get(10, TimeUnit.SECONDS);
    assertEquals(Errno.EAGAIN, errno(() -> a.flock(INO, 1, Vfs.LOCK_EX | Vfs.LOCK_NB, NEVER)));
  }

  @Test
  void flockAndFcntlLocksNeverConflict() throws Exception {
    PosixLocks a = node("a");
    PosixLocks b = node("b");
    a.flock(INO, 1, Vfs.LOCK_EX, NEVER);
    b.setlk(INO, 1, lock(WRITE, 0, EOF), false, NEVER);
    assertEquals(new PosixLock(WRITE, 0, EOF, 0), a.getlk(INO, 1, lock(READ, 0, 0)));
    b.flock(INO, 2, Vfs.LOCK_UN, NEVER); // an flock unlock leaves the fcntl lock alone
    assertEquals(Errno.EAGAIN, errno(() -> a.setlk(INO, 2, lock(READ, 0, 0), false, NEVER)));
    b.setlk(INO, 1, lock(UNLOCK, 0, EOF), false, NEVER); // and the other way round
    assertEquals(Errno.EAGAIN, errno(() -> b.flock(INO, 2, Vfs.LOCK_SH | Vfs.LOCK_NB, NEVER)));
  }

  @Test
  void unlockingAnOwnerThatHoldsNothingCostsNoStoreCall() throws Exception {
    PosixLocks a = node("a");
    int before = ranges.get();
    for (int i = 0; i < 100; i++) { // what libfuse sends on every close
      a.setlk(INO, i, lock(UNLOCK, 0, EOF), false, NEVER);
      a.flock(INO, i, Vfs.LOCK_UN, NEVER);
    }
    assertEquals(before, ranges.get());
    a.setlk(INO, 1, lock(READ, 0, 0), false, NEVER);
    a.setlk(INO, 1, lock(UNLOCK, 0, EOF), false, NEVER);
    int after = ranges.get();
    a.setlk(INO, 1, lock(UNLOCK, 0, EOF), false, NEVER);
    assertEquals(after, ranges.get(), "forgotten once released");
  }

  @Test
  void anInodeNobodyLocksKeepsNoKey() throws Exception {
    PosixLocks a = node("a");
    PosixLocks b = node("b");
    a.setlk(INO, 1, lock(READ, 0, 9), false, NEVER);
    b.setlk(INO, 1, lock(READ, 5, 19), false, NEVER);
    a.flock(INO, 1, Vfs.LOCK_SH, NEVER);
    assertEquals(3, store.prefix(KEYS.posixLocks(INO), 0).kvs().size(), "version + 2 owners");
    a.setlk(INO, 1, lock(UNLOCK, 0, EOF), false, NEVER);
    b.setlk(INO, 1, lock(UNLOCK, 0, 4), false, NEVER);
    b.setlk(INO, 1, lock(UNLOCK, 5, EOF), false, NEVER);
    a.flock(INO, 1, Vfs.LOCK_UN, NEVER);
    assertEquals(0, store.prefix(KEYS.posixLocks(INO), 0).kvs().size());
    assertEquals(0, store.prefix(KEYS.flocks(INO), 0).kvs().size());
  }

  @Test
  void badRequestsAreEinvalAndAFencedNodeLocksNothing() throws Exception {
    Node member = new Node("a");
    PosixLocks a = new PosixLocks(counting, KEYS, member, Duration.ofSeconds(1));
    nodes.add(a);
    assertEquals(Errno.EINVAL, errno(() -> a.setlk(INO, 1, lock(WRITE, -1, 5), false, NEVER)));
    assertEquals(Errno.EINVAL, errno(() -> a.setlk(INO, 1, lock(WRITE, 9, 5), false, NEVER)));
    assertEquals(Errno.EINVAL, errno(() -> a.getlk(INO, 1, lock(UNLOCK, 0, 5))));
    member.fenced.set(true);
    assertEquals(Errno.EIO, errno(() -> a.setlk(INO, 1, lock(WRITE, 0, 5), false, NEVER)));
    assertEquals(Errno.EIO, errno(() -> a.flock(INO, 1, Vfs.LOCK_EX, NEVER)));
  }

  @Test
  void writeLocksFromManyThreadsOnTwoNodesAreNeverHeldAtOnce() throws Exception {
    PosixLocks a = node("a");
    PosixLocks b = node("b");
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger worst = new AtomicInteger();
    List<Future<?>> workers = new ArrayList<>();
    for (int w = 0; w < 6; w++) {
      PosixLocks n = w % 2 == 0 ? a : b;
      long owner = w;
      workers.add(pool.submit(() -> {
        for (int i = 0; i < 20; i++) {
          n.setlk(INO, owner, lock(WRITE, 10, 20), true, NEVER);
          worst.accumulateAndGet(inside.incrementAndGet(), Math::max);
          inside.decrementAndGet();
          n.setlk(INO, owner, lock(UNLOCK, 0, EOF), false, NEVER);
        }
        return null;
      }));
    }
    for (Future<?> f : workers) {
      f.get(50, TimeUnit.SECONDS);
    }
    assertEquals(1, worst.get(), "two owners held one write range at once");
  }
}

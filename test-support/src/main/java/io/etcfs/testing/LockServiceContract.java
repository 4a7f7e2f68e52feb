package io.etcfs.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.spi.fs.InodeFence;
import io.etcfs.spi.fs.Keyspace;
import io.etcfs.spi.lock.CreateGrant;
import io.etcfs.spi.lock.HeldLock;
import io.etcfs.spi.lock.LockMode;
import io.etcfs.spi.lock.LockService;
import io.etcfs.spi.lock.LockTimeoutException;
import io.etcfs.spi.meta.Compare;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.Txn;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What every lock plug-in must do ({@link LockService}'s contract), run by a subclass per
 * backend. Nodes are lock services of one filesystem sharing one store; a node's recall handler
 * is set per test: one that returns at once (a node with nothing to flush), or one that blocks
 * until the test lets go (a node busy flushing). The service gives a lock back when its
 * handler returns.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
public abstract class LockServiceContract {
  protected static final Duration LONG = Duration.ofSeconds(20);
  private static final Duration SHORT = Duration.ofMillis(300);

  private final List<LockService> nodes = new ArrayList<>();
  private final ExecutorService pool = Executors.newCachedThreadPool();
  /** Blocking handlers return when this opens (at the latest when the test ends). */
  private final CountDownLatch endOfTest = new CountDownLatch(1);
  private long inode = 0x1000 + (long) (Math.random() * 1_000_000);

  /** The store the nodes share (and commits are checked against). */
  protected abstract MetaStore store();

  /** A new node's lock service on {@link #store()}, with a session TTL of about 2 s. */
  protected abstract LockService newNode(String name);

  /** Ends a node as a crash would: no release, its session left to run out. */
  protected abstract void crash(LockService node);

  /** Stops a node at the end of a test. */
  protected abstract void stop(LockService node);

  @AfterEach
  void stopNodes() {
    endOfTest.countDown();
    pool.shutdownNow();
    nodes.forEach(this::stop);
  }

  /** A node whose recall handler returns at once, or blocks until the test ends. */
  private LockService node(String name, boolean releasesOnRecall) {
    LockService n = newNode(name);
    nodes.add(n);
    names.put(n, name);
    n.setRecallHandler((lock, wanted) -> {
      if (!releasesOnRecall) {
        awaitQuietly(endOfTest);
      }
    });
    return n;
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private long nextInode() {
    return ++inode;
  }

  @Test
  void anExclusiveLockExcludesEveryOtherNode() throws Exception {
    long ino = nextInode();
    LockService a = node("a", false);
    LockService b = node("b", true);
    List<LockMode> recalls = Collections.synchronizedList(new ArrayList<>());
    a.setRecallHandler((lock, wanted) -> {
      recalls.add(wanted);
      awaitQuietly(endOfTest);
    });
    a.acquire(ino, LockMode.EXCLUSIVE, LONG);
    assertThrows(LockTimeoutException.class, () -> b.acquire(ino, LockMode.SHARED, SHORT));
    assertThrows(LockTimeoutException.class, () -> b.acquire(ino, LockMode.EXCLUSIVE, SHORT));
    assertFalse(recalls.isEmpty(), "the holder was asked for the lock");
  }

  /**
   * {@link LockService#writerElsewhere}: a writer still waiting behind a reader counts as a
   * waiting writer for a third node. It is granted the moment the reader goes, and its
   * write() may return before the third node's view shows that release: an answer from that
   * node's cache then would be a size from before the write. (A backend that keeps no view
   * answers UNKNOWN throughout: the core then reads the fence every time.)
   */
  @Test
  void aWriterWaitingBehindAReaderIsAWriterForTheOthers() throws Exception {
    long ino = nextInode();
    LockService reader = node("reader", false); // holds on until the test ends
    LockService writer = node("writer", true);
    LockService third = node("third", true);
    reader.acquire(ino, LockMode.SHARED, LONG);
    var waiting = pool.submit(() -> writer.acquire(ino, LockMode.EXCLUSIVE, LONG));
    if (third.writerElsewhere(ino) == LockService.Writer.UNKNOWN) {
      return;
    }
    eventually("the third node to see the waiting writer",
        () -> third.writerElsewhere(ino) == LockService.Writer.WAITING);
    assertFalse(waiting.isDone(), "the writer waits behind the reader");
  }

  /**
   * {@link LockService#writerElsewhere}: another node sees an exclusive holder (within the
   * backend's notification delay) and sees it go; a shared holder is no writer. Only for a
   * backend that keeps a view.
   */
  @Test
  void anExclusiveHolderIsSeenFromTheOtherNodes() throws Exception {
    long ino = nextInode();
    LockService a = node("a", true);
    LockService b = node("b", true);
    if (b.writerElsewhere(ino) == LockService.Writer.UNKNOWN) {
      return; // no view: the core reads the fence for every such stat
    }
    HeldLock x = a.acquire(ino, LockMode.EXCLUSIVE, LONG);
    eventually("b to see a's exclusive lock",
        () -> b.writerElsewhere(ino) == LockService.Writer.HOLDING);
    assertEquals(LockService.Writer.NONE, a.writerElsewhere(ino), "a holds it: not elsewhere");
    a.release(x);
    eventually("b to see a's lock go", () -> b.writerElsewhere(ino) == LockService.Writer.NONE);
    a.acquire(ino, LockMode.SHARED, LONG);
    assertEquals(LockService.Writer.NONE, b.writerElsewhere(ino), "a shared holder is no writer");
    HeldLock x2 = b.acquire(ino, LockMode.EXCLUSIVE, LONG); // recalls a's shared lock
    eventually("a to see b's exclusive lock",
        () -> a.writerElsewhere(ino) == LockService.Writer.HOLDING);
    b.release(x2);
  }

  /**
   * The safety rule, with the core's inode fence (spi.fs InodeFence) on top of this backend: a
   * holder whose session was lost commits nothing once another node holds the lock and raised
   * the fence, and it learns so from its session.
   */
  @Test
  void aHolderWhoseSessionWasLostCannotCommit() throws Exception {
    long ino = nextInode();
    LockService a = node("a", false);
    LockService b = node("b", true);
    Holder first = new Holder(a, a.acquire(ino, LockMode.EXCLUSIVE, LONG));
    assertTrue(first.raise() && first.commit(1), "the holder commits");
    crash(a);
    Holder second = new Holder(b, b.acquire(ino, LockMode.EXCLUSIVE, LONG));
    assertTrue(second.raise(), "the new holder raises the fence");
    assertFalse(first.commit(2), "the holder whose session was lost commits nothing");
    assertTrue(second.commit(3));
    assertEquals(3, data(ino));
  }

  /**
   * Two holders never commit out of order: once the second holder raised, the first's commits
   * fail, and the second's see everything the first committed (what it read after its raise).
   */
  @Test
  void twoHoldersNeverCommitOutOfOrder() throws Exception {
    long ino = nextInode();
    LockService a = node("a", true);
    LockService b = node("b", true);
    Holder first = new Holder(a, a.acquire(ino, LockMode.EXCLUSIVE, LONG));
    assertTrue(first.raise() && first.commit(1));
    Holder second = new Holder(b, b.acquire(ino, LockMode.EXCLUSIVE, LONG)); // recalls a's
    assertTrue(second.lock.fencingToken() > first.lock.fencingToken());
    assertTrue(second.raise());
    assertEquals(1, data(ino), "the second holder sees the first's commit");
    assertFalse(first.commit(2), "the first holder's late commit is rejected");
    assertTrue(second.commit(3));
    assertEquals(3, data(ino));
    assertEquals(List.of(1L, 3L), applied(ino), "only commits in grant order applied");
  }

  private static void eventually(String what, java.util.function.BooleanSupplier check)
      throws InterruptedException {
    Eventually.eventually(what, LONG, check);
  }

  /**
   * A lock a backend grants with the transaction that creates its inode ({@link
   * LockService#createGrant}, 2.2) is held exactly as an acquired one: acquiring it again costs
   * nothing, commits under it apply while it is held, another node recalls it and gets the lock
   * with a greater token, and once that node raised the fence the old holder's commits fail. A
   * backend that cannot grant this way (null) passes.
   */
  @Test
  void aLockGrantedWithItsInodesCreateIsHeldAsAnAcquiredOne() throws Exception {
    long ino = nextInode();
    LockService a = node("a", true);
    LockService b = node("b", true);
    CreateGrant grant = a.createGrant(ino);
    if (grant == null) {
      return;
    }
    Holder created = createUnder(a, grant);
    HeldLock lock = created.lock;
    assertEquals(LockMode.EXCLUSIVE, lock.mode());
    assertSame(lock, a.acquire(ino, LockMode.EXCLUSIVE, LONG), "held: no new request");
    assertTrue(created.commit(1), "a commit under the created lock applies");
    if (b.writerElsewhere(ino) != LockService.Writer.UNKNOWN) {
      eventually("b to see a's created lock",
          () -> b.writerElsewhere(ino) == LockService.Writer.HOLDING);
    }
    Holder theirs = new Holder(b, b.acquire(ino, LockMode.EXCLUSIVE, LONG)); // recalls a's lock
    assertTrue(theirs.lock.fencingToken() > lock.fencingToken(), lock + " then " + theirs.lock);
    assertTrue(theirs.raise());
    assertFalse(created.commit(2), "a commit under the recalled lock is rejected");
  }

  /** A node that crashes right after a create that granted it the lock holds it no longer. */
  @Test
  void aCrashedCreatorsLockIsFreeWithinItsSessionTtl() throws Exception {
    long ino = nextInode();
    LockService a = node("a", false);
    LockService b = node("b", true);
    CreateGrant grant = a.createGrant(ino);
    if (grant == null) {
      return;
    }
    Holder created = createUnder(a, grant);
    crash(a);
    long t0 = System.nanoTime();
    Holder next = new Holder(b, b.acquire(ino, LockMode.EXCLUSIVE, LONG));
    double seconds = (System.nanoTime() - t0) / 1e9;
    assertTrue(seconds < 6, "takeover took " + seconds + " s");
    assertTrue(next.raise());
    assertFalse(created.commit(1), "the crashed creator can commit nothing");
  }

  /**
   * Commits a "create" carrying {@code grant} and the creator's fence, as the core does, and
   * adopts the lock it granted.
   */
  private Holder createUnder(LockService node, CreateGrant grant) {
    InodeFence mine = new InodeFence(names.get(node), 1, grants.incrementAndGet(), false);
    Txn create = new Txn();
    grant.guards().forEach(create::when);
    create.then(Op.put(io.etcfs.spi.meta.Keys.of("/contract/created/" + grant.inode()),
        new byte[] {1}));
    create.then(Op.put(InodeFence.key(SPACE, grant.inode()), mine.value()));
    grant.ops().forEach(create::then);
    var result = store().commit(create);
    assertTrue(result.succeeded(), "the create commits");
    HeldLock lock = node.adoptCreated(grant, result.revision());
    assertTrue(lock != null, "adopted");
    return new Holder(node, lock, mine);
  }

  @Test
  void sharedLocksAreHeldTogetherWithoutRecalls() throws Exception {
    long ino = nextInode();
    LockService a = node("a", false);
    LockService b = node("b", false);
    AtomicInteger recalls = new AtomicInteger();
    a.setRecallHandler((lock, wanted) -> recalls.incrementAndGet());
    b.setRecallHandler((lock, wanted) -> recalls.incrementAndGet());
    a.acquire(ino, LockMode.SHARED, LONG);
    b.acquire(ino, LockMode.SHARED, LONG);
    assertEquals(0, recalls.get());
  }

  @Test
  void aRecalledHolderHandsOverAndTheTokenGrows() throws Exception {
    long ino = nextInode();
    LockService a = node("a", true);
    LockService b = node("b", true);
    HeldLock first = a.acquire(ino, LockMode.EXCLUSIVE, LONG);
    HeldLock second = b.acquire(ino, LockMode.EXCLUSIVE, LONG);
    assertTrue(second.fencingToken() > first.fencingToken(), first + " then " + second);
    // A backend whose tokens are store revisions (etcd's) names one at least as new; one that
    // knows no revision says 0, and the core reads the store's.
    assertTrue(second.grantRevision() == 0 || second.grantRevision() >= second.fencingToken());
    HeldLock third = a.acquire(ino, LockMode.SHARED, LONG);
    assertTrue(third.fencingToken() > second.fencingToken());
  }

  @Test
  void aCachedLockIsReacquiredForFree() throws Exception {
    long ino = nextInode();
    LockService a = node("a", true);
    HeldLock x = a.acquire(ino, LockMode.EXCLUSIVE, LONG);
    assertSame(x, a.acquire(ino, LockMode.EXCLUSIVE, LONG));
    assertSame(x, a.acquire(ino, LockMode.SHARED, LONG), "exclusive covers shared");
  }

  @Test
  void commitsApplyExactlyUntilTheNextHolderRaises() throws Exception {
    long ino = nextInode();
    LockService a = node("a", true);
    LockService b = node("b", true);
    Holder mine = new Holder(a, a.acquire(ino, LockMode.EXCLUSIVE, LONG));
    assertTrue(mine.raise() && mine.commit(1), "a commit under a held lock applies");
    new Holder(b, b.acquire(ino, LockMode.EXCLUSIVE, LONG)).raise();
    assertFalse(mine.commit(2), "a commit under a lock given up is rejected");
  }

  @Test
  void writersAreNotStarvedByAStreamOfReaders() throws Exception {
    long ino = nextInode();
    CountDownLatch letGo = new CountDownLatch(1);
    LockService reader1 = node("r1", false);
    reader1.setRecallHandler((lock, wanted) -> awaitQuietly(letGo));
    LockService writer = node("w", true);
    LockService reader2 = node("r2", true);
    reader1.acquire(ino, LockMode.SHARED, LONG);
    List<String> order = Collections.synchronizedList(new ArrayList<>());
    Future<?> w = pool.submit(() -> {
      writer.acquire(ino, LockMode.EXCLUSIVE, LONG);
      order.add("writer");
      return null;
    });
    awaitQueued(ino, 2);
    Future<?> r = pool.submit(() -> {
      reader2.acquire(ino, LockMode.SHARED, LONG);
      order.add("reader2");
      return null;
    });
    awaitQueued(ino, 3);
    assertFalse(r.isDone(), "a reader arriving after a waiting writer waits behind it");
    letGo.countDown();
    w.get(30, TimeUnit.SECONDS);
    r.get(30, TimeUnit.SECONDS);
    assertEquals(List.of("writer", "reader2"), order);
  }

  @Test
  void twoWritersHandTheLockBackAndForthWithoutStalls() throws Exception {
    long ino = nextInode();
    LockService a = node("a", true);
    LockService b = node("b", true);
    List<Future<Integer>> loops = new ArrayList<>();
    for (LockService n : List.of(a, b)) {
      loops.add(pool.submit(() -> {
        long last = -1;
        int handOvers = 0;
        for (int i = 0; i < 25; i++) {
          // A lost recall would leave the other side waiting for an idle release: far longer.
          HeldLock l = n.acquire(ino, LockMode.EXCLUSIVE, Duration.ofSeconds(10));
          handOvers += l.fencingToken() != last ? 1 : 0;
          last = l.fencingToken();
        }
        return handOvers;
      }));
    }
    for (Future<Integer> loop : loops) {
      assertTrue(loop.get(60, TimeUnit.SECONDS) >= 1);
    }
  }

  @Test
  void aCrashedHoldersLockIsFreeWithinItsSessionTtl() throws Exception {
    long ino = nextInode();
    LockService a = node("a", false);
    LockService b = node("b", true);
    Holder lost = new Holder(a, a.acquire(ino, LockMode.EXCLUSIVE, LONG));
    assertTrue(lost.raise());
    crash(a);
    long t0 = System.nanoTime();
    Holder next = new Holder(b, b.acquire(ino, LockMode.EXCLUSIVE, LONG));
    double seconds = (System.nanoTime() - t0) / 1e9;
    assertTrue(seconds < 6, "takeover took " + seconds + " s");
    assertTrue(next.raise());
    assertFalse(lost.commit(1), "the crashed holder can commit nothing");
  }

  @Test
  void theMinimumHoldTimeDelaysARecall() throws Exception {
    long ino = nextInode();
    LockService a = node("a", false);
    LockService b = node("b", true);
    CompletableFuture<Long> recalledAt = new CompletableFuture<>();
    a.setRecallHandler((lock, wanted) -> recalledAt.complete(System.nanoTime()));
    long grantedAt = System.nanoTime();
    a.acquire(ino, LockMode.EXCLUSIVE, LONG);
    b.acquire(ino, LockMode.EXCLUSIVE, LONG);
    assertTrue(recalledAt.get(10, TimeUnit.SECONDS) - grantedAt >= TimeUnit.MILLISECONDS.toNanos(10),
        "recalled right after the grant");
  }

  @Test
  void releasingTwiceOrAfterARecallIsHarmless() throws Exception {
    long ino = nextInode();
    LockService a = node("a", true);
    LockService b = node("b", true);
    HeldLock lock = a.acquire(ino, LockMode.EXCLUSIVE, LONG);
    a.release(lock);
    a.release(lock);
    Holder theirs = new Holder(b, b.acquire(ino, LockMode.EXCLUSIVE, LONG));
    a.release(lock);
    assertTrue(theirs.raise() && theirs.commit(1),
        "an old holder's late release took nothing from b");
  }

  @Test
  void aTimedOutRequestLeavesNoPlaceInTheQueue() throws Exception {
    long ino = nextInode();
    LockService a = node("a", false);
    LockService b = node("b", true);
    LockService c = node("c", true);
    // a keeps its lock through b's request (its handler blocks), then gives it up by hand
    HeldLock held = a.acquire(ino, LockMode.EXCLUSIVE, LONG);
    assertThrows(LockTimeoutException.class, () -> b.acquire(ino, LockMode.EXCLUSIVE, SHORT));
    a.release(held);
    c.acquire(ino, LockMode.EXCLUSIVE, Duration.ofSeconds(5)); // not behind b's old request
  }

  private static final Keyspace SPACE = Keyspace.of("contract");
  private final java.util.Map<LockService, String> names = new java.util.HashMap<>();
  private final java.util.concurrent.atomic.AtomicLong grants =
      new java.util.concurrent.atomic.AtomicLong();

  /**
   * The core's side of one exclusive grant, as the core runs it (etcfs-core's Fences): raise
   * the inode's fence, then commit under it — each commit compares that the fence names this
   * grant. Here a commit writes a number to the inode's data key and appends it to
   * the inode's log of applied commits.
   */
  private final class Holder {
    final LockService node;
    final HeldLock lock;
    final InodeFence mine;

    Holder(LockService node, HeldLock lock) {
      this(node, lock, new InodeFence(names.get(node), 1, grants.incrementAndGet(), false));
    }

    Holder(LockService node, HeldLock lock, InodeFence mine) {
      this.node = node;
      this.lock = lock;
      this.mine = mine;
    }

    boolean raise() {
      byte[] key = InodeFence.key(SPACE, lock.inode());
      var stored = store().get(key);
      return store().commit(new Txn()
          .when(Compare.modRevision(key, stored.map(KeyValue::modRevision).orElse(0L)))
          .then(Op.put(key, mine.value()))).succeeded();
    }

    boolean commit(long value) {
      byte[] key = InodeFence.key(SPACE, lock.inode());
      byte[] log = io.etcfs.spi.meta.Keys.of("/contract/log/" + lock.inode() + "/" + value);
      return store().commit(new Txn().when(Compare.value(key, mine.value()))
          .then(Op.put(dataKey(lock.inode()), Long.toString(value).getBytes()))
          .then(Op.put(log, new byte[] {1}))).succeeded();
    }
  }

  private static byte[] dataKey(long ino) {
    return io.etcfs.spi.meta.Keys.of("/contract/data/" + ino);
  }

  private long data(long ino) {
    return store().get(dataKey(ino)).map(kv -> Long.parseLong(kv.valueString())).orElse(0L);
  }

  /** The commits that applied on {@code ino}, in the order they applied. */
  private List<Long> applied(long ino) {
    return store().prefix(io.etcfs.spi.meta.Keys.of("/contract/log/" + ino + "/"), 0).kvs()
        .stream().sorted(java.util.Comparator.comparingLong(KeyValue::modRevision))
        .map(kv -> Long.parseLong(kv.keyString().substring(kv.keyString().lastIndexOf('/') + 1)))
        .toList();
  }

  /** Waits until {@code n} requests are queued on the inode in the store (any backend's keys). */
  private void awaitQueued(long ino, int n) throws InterruptedException {
    eventually(n + " requests queued on " + ino, () -> queued(ino) >= n);
  }

  /** How many lock requests on {@code ino} the backend has recorded; override if not in store. */
  protected int queued(long ino) {
    String hex = String.format("%016x", ino);
    int count = 0;
    for (KeyValue kv : store().prefix(io.etcfs.spi.meta.Keys.of(io.etcfs.spi.fs.Keyspace.ROOT), 0).kvs()) {
      if (kv.keyString().contains("/locks/" + hex + "/")) {
        count++;
      }
    }
    return count;
  }
}

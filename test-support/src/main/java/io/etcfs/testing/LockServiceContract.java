package io.etcfs.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.spi.lock.CreateGrant;
import io.etcfs.spi.lock.HeldLock;
import io.etcfs.spi.lock.LockMode;
import io.etcfs.spi.lock.LockService;
import io.etcfs.spi.lock.LockTimeoutException;
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
   * {@link LockService#attributesFrom}: a writer still waiting behind a reader counts as a
   * writer elsewhere for a third node. It is granted the moment the reader goes, and its
   * write() may return before the third node's view shows that release: an answer from that
   * node's cache then would be a size from before the write.
   */
  @Test
  void aWriterWaitingBehindAReaderIsAWriterForTheOthers() throws Exception {
    long ino = nextInode();
    LockService reader = node("reader", false); // holds on until the test ends
    LockService writer = node("writer", true);
    LockService third = node("third", true);
    reader.acquire(ino, LockMode.SHARED, LONG);
    var waiting = pool.submit(() -> writer.acquire(ino, LockMode.EXCLUSIVE, LONG));
    eventually("the third node to see the waiting writer",
        () -> third.attributesFrom(ino) == LockService.UNCOMMITTED_ELSEWHERE);
    assertFalse(waiting.isDone(), "the writer waits behind the reader");
    assertTrue(writer.attributesFrom(ino) >= 0, "its own request is not elsewhere for it");
  }

  /**
   * {@link LockService#attributesFrom}: another node sees an exclusive holder (within the
   * backend's notification delay) as one that may hold uncommitted changes, and sees it go; the
   * holder itself is not "elsewhere", and a shared holder is no exclusive one.
   */
  @Test
  void anExclusiveHolderIsSeenFromTheOtherNodes() throws Exception {
    long ino = nextInode();
    LockService a = node("a", true);
    LockService b = node("b", true);
    long before = b.attributesFrom(ino);
    // Nobody holds it yet: nothing to recall, and at most a revision already past to catch up to
    // (a backend may answer with a bound, such as its last full read of its lock view).
    assertTrue(before >= 0 && before <= store().prefix(new byte[] {0}, 1).revision(), "nobody holds it yet: " + before);
    HeldLock x = a.acquire(ino, LockMode.EXCLUSIVE, LONG);
    eventually("b to see a's exclusive lock",
        () -> b.attributesFrom(ino) == LockService.UNCOMMITTED_ELSEWHERE);
    assertTrue(a.attributesFrom(ino) >= 0, "a holds it: not elsewhere for a");
    a.release(x);
    // Gone: nothing to recall; at most a revision to catch up to (what a committed before).
    eventually("b to see a's lock go", () -> b.attributesFrom(ino) >= 0);
    HeldLock s = a.acquire(ino, LockMode.SHARED, LONG);
    assertTrue(a.cleanOps(s).isEmpty(), "a shared holder has nothing to declare");
    HeldLock x2 = b.acquire(ino, LockMode.EXCLUSIVE, LONG); // recalls a's shared lock
    eventually("a to see b's exclusive lock",
        () -> a.attributesFrom(ino) == LockService.UNCOMMITTED_ELSEWHERE);
    assertTrue(b.attributesFrom(ino) >= 0);
    b.release(x2);
  }

  /**
   * A holder that commits with {@link LockService#cleanOps} is seen clean, at the revision of
   * that commit, until it calls {@link LockService#dirty}; dirty on a lock given up says so.
   */
  @Test
  void aCleanHolderIsSeenCleanUntilItIsDirtyAgain() throws Exception {
    long ino = nextInode();
    LockService a = node("a", true);
    LockService b = node("b", true);
    HeldLock x = a.acquire(ino, LockMode.EXCLUSIVE, LONG);
    assertTrue(a.dirty(x), "dirty while dirty: nothing to do");
    Txn commit = new Txn();
    a.guards(x).forEach(commit::when);
    commit.then(Op.put(io.etcfs.spi.meta.Keys.of("/contract/data"), new byte[] {7}));
    a.cleanOps(x).forEach(commit::then);
    var result = store().commit(commit);
    assertTrue(result.succeeded());
    long declared = result.revision();
    eventually("b to see a clean", () -> b.attributesFrom(ino) == declared);
    assertTrue(a.dirty(x));
    eventually("b to see a dirty again",
        () -> b.attributesFrom(ino) == LockService.UNCOMMITTED_ELSEWHERE);
    assertTrue(a.dirty(x), "twice");
    b.acquire(ino, LockMode.EXCLUSIVE, LONG); // a's lock is recalled and given back
    assertFalse(a.dirty(x), "a lock given up cannot be made dirty");
  }

  private static void eventually(String what, java.util.function.BooleanSupplier check)
      throws InterruptedException {
    Eventually.eventually(what, LONG, check);
  }

  /**
   * A lock a backend grants with the transaction that creates its inode ({@link
   * LockService#createGrant}, 2.2) is held exactly as an acquired one: acquiring it again costs
   * nothing, its guards hold while it is held, another node sees it, recalls it and gets the lock
   * with a greater token, and the old holder's guards fail from then on. A backend that cannot
   * grant this way (null) passes.
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
    HeldLock lock = createUnder(a, grant);
    assertEquals(LockMode.EXCLUSIVE, lock.mode());
    assertSame(lock, a.acquire(ino, LockMode.EXCLUSIVE, LONG), "held: no new request");
    assertTrue(commitUnder(a, lock), "a commit under the created lock applies");
    eventually("b to see a's created lock",
        () -> b.attributesFrom(ino) == LockService.UNCOMMITTED_ELSEWHERE);
    HeldLock theirs = b.acquire(ino, LockMode.SHARED, LONG); // recalls a's lock
    assertTrue(theirs.fencingToken() > lock.fencingToken(), lock + " then " + theirs);
    assertFalse(commitUnder(a, lock), "a commit under the recalled lock is rejected");
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
    HeldLock lock = createUnder(a, grant);
    crash(a);
    long t0 = System.nanoTime();
    b.acquire(ino, LockMode.EXCLUSIVE, LONG);
    double seconds = (System.nanoTime() - t0) / 1e9;
    assertTrue(seconds < 6, "takeover took " + seconds + " s");
    assertFalse(commitUnder(a, lock), "the crashed creator can commit nothing");
  }

  /** Commits a "create" carrying {@code grant} and adopts the lock it granted. */
  private HeldLock createUnder(LockService node, CreateGrant grant) {
    Txn create = new Txn();
    grant.guards().forEach(create::when);
    create.then(Op.put(io.etcfs.spi.meta.Keys.of("/contract/created/" + grant.inode()),
        new byte[] {1}));
    grant.ops().forEach(create::then);
    var result = store().commit(create);
    assertTrue(result.succeeded(), "the create commits");
    HeldLock lock = node.adoptCreated(grant, result.revision());
    assertTrue(lock != null, "adopted");
    return lock;
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
    assertTrue(second.grantRevision() >= second.fencingToken());
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
  void guardsHoldExactlyWhileTheLockIsHeld() throws Exception {
    long ino = nextInode();
    LockService a = node("a", true);
    LockService b = node("b", true);
    HeldLock lock = a.acquire(ino, LockMode.EXCLUSIVE, LONG);
    assertTrue(commitUnder(a, lock), "a commit under a held lock applies");
    b.acquire(ino, LockMode.EXCLUSIVE, LONG);
    assertFalse(commitUnder(a, lock), "a commit under a lock given up is rejected");
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
    HeldLock lock = a.acquire(ino, LockMode.EXCLUSIVE, LONG);
    crash(a);
    long t0 = System.nanoTime();
    b.acquire(ino, LockMode.EXCLUSIVE, LONG);
    double seconds = (System.nanoTime() - t0) / 1e9;
    assertTrue(seconds < 6, "takeover took " + seconds + " s");
    assertFalse(commitUnderGuards(a.guards(lock)), "the crashed holder can commit nothing");
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
    HeldLock theirs = b.acquire(ino, LockMode.EXCLUSIVE, LONG);
    a.release(lock);
    assertTrue(commitUnder(b, theirs), "an old holder's late release took nothing from b");
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

  private boolean commitUnder(LockService node, HeldLock lock) {
    return commitUnderGuards(node.guards(lock));
  }

  private boolean commitUnderGuards(List<io.etcfs.spi.meta.Compare> guards) {
    Txn txn = new Txn();
    guards.forEach(txn::when);
    txn.then(Op.put(io.etcfs.spi.meta.Keys.of("/contract/guarded"), new byte[] {1}));
    return store().commit(txn).succeeded();
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

package io.etcfs.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.etcfs.spi.alloc.Allocator;
import io.etcfs.spi.alloc.BlockOwner;
import io.etcfs.spi.alloc.Extent;
import io.etcfs.spi.alloc.NoSpaceException;
import io.etcfs.spi.fencing.DeadNode;
import io.etcfs.spi.fencing.RecoveryParticipant;
import io.etcfs.spi.fs.FsRecord;
import io.etcfs.spi.fs.Keyspace;
import io.etcfs.spi.meta.Compare;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.Txn;
import io.etcfs.spi.meta.TxnResult;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What every allocator plug-in must do ({@link Allocator}'s contract, invariant 1: no block is
 * handed out while another inode references it), run by a subclass per allocator and per store.
 * Each test formats a filesystem of its own in the store ({@value #ARENAS} arenas of {@value
 * #BLOCKS_PER_ARENA} blocks: small, so that tests run the device full) and commits as the core
 * does: the allocator's operations in one transaction under the node's generation guard. The
 * block ownership records ({@link BlockOwner}) are checked against what was committed.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class AllocatorContract {
  protected static final int ARENAS = 4;
  protected static final long BLOCKS_PER_ARENA = 64;
  protected static final long FIRST_BLOCK = 256;
  private static final int BLOCK_SIZE = 4096;

  /** This test's filesystem: a name of its own, so tests can share one etcd. */
  protected final String fs = "alloc" + Long.toHexString(new Random().nextLong() & 0xffffffffL);
  private final List<Node> nodes = new ArrayList<>();
  private final ExecutorService pool = Executors.newCachedThreadPool();

  /** The store the nodes share. */
  protected abstract MetaStore store();

  /** A new allocator for {@code membership}'s node on filesystem {@code fs}. */
  protected abstract Allocator newAllocator(String fs, TestMembership membership);

  /** The allocator's share of recovery, as run on a live node. */
  protected abstract RecoveryParticipant recovery(String fs, TestMembership membership);

  /** Ends an allocator as a crash would: its work stops, it releases and writes nothing. */
  protected abstract void crash(Allocator allocator);

  /** Ends an allocator at the end of a test. */
  protected abstract void stop(Allocator allocator);

  /**
   * A new allocator for {@code membership}'s node configured with {@link Allocator#STANDBY}: a
   * live switch's target before its cutover.
   */
  protected abstract Allocator newStandby(String fs, TestMembership membership);

  /** The areas the allocator registers as its state ({@link Allocator#STATE}). */
  protected abstract List<String> stateAreas();

  @BeforeEach
  void format() {
    long arenaSize = BLOCKS_PER_ARENA * BLOCK_SIZE;
    FsRecord r = new FsRecord(UUID.randomUUID(), fs, BLOCK_SIZE, arenaSize,
        FIRST_BLOCK * BLOCK_SIZE + ARENAS * arenaSize, FIRST_BLOCK * BLOCK_SIZE, ARENAS, "etcd",
        "contract", Instant.now());
    assertTrue(store().commit(new Txn().when(Compare.absent(Keyspace.of(fs).record()))
        .then(Op.put(Keyspace.of(fs).record(), r.encode()))).succeeded());
  }

  @AfterEach
  void stopNodes() {
    pool.shutdownNow();
    for (Node n : nodes) {
      if (!n.crashed) {
        stop(n.allocator);
      }
    }
  }

  /** One node: its membership and its allocator. */
  protected final class Node {
    final TestMembership membership;
    final Allocator allocator;
    boolean crashed;

    Node(TestMembership membership, Allocator allocator) {
      this.membership = membership;
      this.allocator = allocator;
    }

    /** Commits {@code referenced} to {@code ino} and {@code released} from it, as the core does. */
    boolean commit(long ino, List<Extent> referenced, List<Extent> released) {
      Txn txn = new Txn().when(Compare.createRevision(membership.memberKey(),
          membership.generation()));
      allocator.commitOps(ino, referenced, released).forEach(txn::then);
      TxnResult r = store().commit(txn);
      if (r.succeeded()) {
        allocator.committed(referenced, released, r.revision());
      } else {
        allocator.abandon(referenced);
      }
      return r.succeeded();
    }

    /** Allocates until the device answers no space; every allocation all-or-nothing. */
    List<Extent> allocateAll(long step) {
      List<Extent> out = new ArrayList<>();
      while (true) {
        try {
          out.addAll(allocator.allocate(step, -1));
          if (blocks(out) > total()) {
            fail("handed out " + blocks(out) + " blocks of a device of " + total());
          }
        } catch (NoSpaceException e) {
          if (step == 1) {
            return out;
          }
          step = 1; // the last few blocks, one at a time
        }
      }
    }
  }

  protected Node node(String name) {
    TestMembership m = new TestMembership(store(), fs, name);
    Node n = new Node(m, newAllocator(fs, m));
    nodes.add(n);
    return n;
  }

  private long total() {
    return ARENAS * BLOCKS_PER_ARENA;
  }

  @Test
  void aFullDeviceAnswersNoSpaceToAllocationsAndPromises() {
    Node a = node("a");
    assertEquals(total(), a.allocator.totalBlocks());
    List<Extent> all = a.allocateAll(7);
    assertEquals(total(), blocks(all), "one node alone gets every block");
    assertDisjointInsideTheDataArea(all);
    assertThrows(NoSpaceException.class, () -> a.allocator.allocate(1, -1));
    assertThrows(NoSpaceException.class, () -> a.allocator.reserve(1));
    assertEquals(0, a.allocator.freeBlocks());
  }

  @Test
  void aCommittedReleaseFreesTheSpace() throws Exception {
    Node a = node("a");
    List<Extent> all = a.allocateAll(16);
    assertTrue(a.commit(9, all, List.of()));
    List<Extent> half = all.subList(0, all.size() / 2);
    long freed = blocks(half);
    assertTrue(a.commit(9, List.of(), half));
    await(() -> a.allocator.freeBlocks() == freed, "the released blocks count as free");
    List<Extent> again = a.allocateAll(8);
    assertEquals(freed, blocks(again));
    assertDisjoint(concat(all.subList(all.size() / 2, all.size()), again));
    assertOwners(Map.of(9L, all.subList(all.size() / 2, all.size())));
  }

  @Test
  void noBlockIsHandedOutTwiceAcrossNodes() throws Exception {
    Node a = node("a");
    Node b = node("b");
    Future<List<Extent>> fa = pool.submit(() -> churn(a, 100));
    Future<List<Extent>> fb = pool.submit(() -> churn(b, 200));
    List<Extent> ofA = fa.get(90, TimeUnit.SECONDS);
    List<Extent> ofB = fb.get(90, TimeUnit.SECONDS);
    assertDisjointInsideTheDataArea(concat(ofA, ofB));
    assertTrue(blocks(ofA) + blocks(ofB) <= total());
  }

  /**
   * Allocates 1–8 blocks at a time until the device is full, committing every other allocation
   * to an inode of its own (from {@code firstIno}) and keeping the rest reserved; returns every
   * extent it holds. The ownership records then name exactly the committed ones.
   */
  private List<Extent> churn(Node n, long firstIno) {
    Random random = new Random(firstIno);
    List<Extent> held = new ArrayList<>();
    Map<Long, List<Extent>> committed = new TreeMap<>();
    long ino = firstIno;
    while (true) {
      List<Extent> got;
      try {
        got = n.allocator.allocate(1 + random.nextInt(8), -1);
      } catch (NoSpaceException e) {
        break;
      }
      held.addAll(got);
      if (blocks(held) > total()) {
        fail("node " + n.membership.nodeName() + " holds more blocks than the device has");
      }
      if (random.nextBoolean()) {
        if (!n.commit(ino, got, List.of())) {
          fail("commit of inode " + ino + " failed");
        }
        committed.put(ino++, got);
      }
    }
    assertOwners(committed);
    return held;
  }

  @Test
  void committedBlocksStayTakenWhenTheNodeRestarts() throws NoSpaceException {
    Node a = node("a");
    List<Extent> kept = a.allocator.allocate(40, -1);
    assertTrue(a.commit(11, kept, List.of()));
    a.allocator.allocate(10, -1); // never committed: free again after the restart
    crash(a);
    Node again = new Node(a.membership, newAllocator(fs, a.membership));
    nodes.add(again);
    List<Extent> rest = again.allocateAll(8);
    assertEquals(total() - 40, blocks(rest), "every block but the committed ones");
    assertDisjoint(concat(kept, rest));
  }

  @Test
  void aDeadNodesSpaceIsRecoveredButNotWhatItCommitted() throws Exception {
    Node a = node("a");
    List<Extent> kept = a.allocator.allocate(30, -1);
    assertTrue(a.commit(13, kept, List.of()));
    a.allocator.allocate(20, -1);
    a.allocator.reserve(5);
    long generation = a.membership.generation();
    crash(a);
    a.membership.leave();

    Node b = node("b");
    recovery(fs, b.membership).recover(new DeadNode("a", generation));
    List<Extent> got = b.allocateAll(8);
    assertEquals(total() - 30, blocks(got), "everything but what the dead node committed");
    assertDisjoint(concat(kept, got));
    assertOwners(Map.of(13L, kept));
  }

  /**
   * An allocator first started on a filesystem another allocator has used (a switch of
   * allocator, or a rebuild): whatever the ownership records name is in use, whoever allocated
   * it, and everything else is free.
   */
  @Test
  void blocksOwnedBeforeTheAllocatorFirstRanAreNeverHandedOut() throws Exception {
    Keyspace space = Keyspace.of(fs);
    List<Extent> owned = List.of(new Extent(FIRST_BLOCK + 3, 5),
        new Extent(FIRST_BLOCK + BLOCKS_PER_ARENA + 10, 40),
        new Extent(FIRST_BLOCK + 3 * BLOCKS_PER_ARENA, BLOCKS_PER_ARENA));
    Txn txn = new Txn();
    long ino = 100;
    for (Extent e : owned) {
      BlockOwner o = new BlockOwner(e.start(), e.length(), ino++);
      txn.then(Op.put(o.key(space), o.value()));
    }
    assertTrue(store().commit(txn).succeeded());
    List<Extent> got = node("a").allocateAll(8);
    assertEquals(total() - blocks(owned), blocks(got), "everything the records do not name");
    assertDisjointInsideTheDataArea(concat(owned, got));
  }

  /**
   * A live switch prepares its target in standby while another allocator still allocates: the
   * standby one must neither read nor write allocation state, and must refuse to allocate.
   */
  @Test
  void aStandbyAllocatorWritesNothingAndAllocatesNothing() throws Exception {
    Node a = node("a");
    assertTrue(a.commit(7, a.allocator.allocate(12, -1), List.of()));
    for (String area : stateAreas()) {
      assertTrue(Allocator.isStateArea(area), area + " is not an area a switch may clear");
    }
    TestMembership m = new TestMembership(store(), fs, "b");
    long before = store().get(Keyspace.of(fs).record()).orElseThrow().modRevision();
    long revision = store().prefix(Keyspace.of(fs).bytes(""), 1).revision();
    Allocator standby = newStandby(fs, m);
    try {
      assertThrows(IllegalStateException.class, () -> standby.allocate(1, -1));
      assertThrows(IllegalStateException.class, () -> standby.reserve(1));
      assertThrows(IllegalStateException.class, standby::freeBlocks);
    } finally {
      stop(standby);
    }
    assertEquals(before, store().get(Keyspace.of(fs).record()).orElseThrow().modRevision());
    // the membership's own key is the only write since: nothing of the allocator's
    List<KeyValue> changed = new ArrayList<>();
    for (KeyValue kv : store().prefix(Keyspace.of(fs).bytes(""), 0).kvs()) {
      if (kv.modRevision() > revision && !kv.keyString().contains("/members/")) {
        changed.add(kv);
      }
    }
    assertEquals(List.of(), changed.stream().map(KeyValue::keyString).toList(),
        "keys a standby allocator wrote");
  }

  /**
   * A switch back to this allocator after another one was in use: the other allocator handed
   * out and freed blocks meanwhile, recorded only in the ownership records. With its state areas
   * cleared (the cutover), the allocator hands out exactly what the records leave free — none
   * of what the other one committed, all of what it freed.
   */
  @Test
  void aSwitchBackStartsFromTheOwnershipRecordsOnceItsStateIsCleared() throws Exception {
    Keyspace space = Keyspace.of(fs);
    Node a = node("a");
    List<Extent> kept = a.allocator.allocate(20, -1);
    List<Extent> freedLater = a.allocator.allocate(20, -1);
    assertTrue(a.commit(1, kept, List.of()));
    assertTrue(a.commit(2, freedLater, List.of()));
    a.crashed = true;
    stop(a.allocator); // the switch away: a clean stop
    // the other allocator's period: inode 2 released, inode 3 given blocks this one never saw
    Txn other = new Txn();
    for (KeyValue kv : store().prefix(BlockOwner.prefix(space), 0).kvs()) {
      BlockOwner o = BlockOwner.decode(space, kv.key(), kv.value());
      if (o != null && o.inode() == 2) {
        other.then(Op.delete(kv.key()));
      }
    }
    List<Extent> theirs = new ArrayList<>();
    for (long b = FIRST_BLOCK + total() - 1; theirs.size() < 6; b -= 3) {
      Extent e = new Extent(b, 1);
      if (!overlaps(concat(kept, freedLater), e)) {
        theirs.add(e);
        BlockOwner o = new BlockOwner(b, 1, 3);
        other.then(Op.put(o.key(space), o.value()));
      }
    }
    // the cutover back to this allocator
    for (String area : stateAreas()) {
      other.then(Op.deletePrefix(space.bytes(area)));
    }
    assertTrue(store().commit(other).succeeded());
    Node c = node("c");
    List<Extent> got = c.allocateAll(8);
    assertEquals(total() - blocks(kept) - blocks(theirs), blocks(got),
        "every block the ownership records leave free, inode 2's included");
    assertDisjointInsideTheDataArea(concat(concat(kept, theirs), got));
  }

  private static boolean overlaps(List<Extent> extents, Extent e) {
    for (Extent x : extents) {
      if (x.start() < e.start() + e.length() && e.start() < x.start() + x.length()) {
        return true;
      }
    }
    return false;
  }

  private void crash(Node n) {
    n.crashed = true;
    crash(n.allocator);
  }

  /** The ownership records in the store are exactly {@code expected} (inode → extents). */
  protected void assertOwners(Map<Long, List<Extent>> expected) {
    Keyspace space = Keyspace.of(fs);
    TreeMap<Long, Long> wanted = new TreeMap<>(); // block → inode, block by block
    expected.forEach((ino, extents) -> extents.forEach(e -> {
      for (long b = e.start(); b < e.start() + e.length(); b++) {
        wanted.put(b, ino);
      }
    }));
    TreeMap<Long, Long> found = new TreeMap<>();
    for (KeyValue kv : store().prefix(BlockOwner.prefix(space), 0).kvs()) {
      BlockOwner o = BlockOwner.decode(space, kv.key(), kv.value());
      assertTrue(o != null, "not an ownership record: " + kv.keyString());
      for (long b = o.start(); b < o.end(); b++) {
        if (found.put(b, o.inode()) != null) {
          fail("block " + b + " has two ownership records");
        }
      }
    }
    // another node's records are not this caller's business: compare on the blocks it names
    TreeMap<Long, Long> mine = new TreeMap<>();
    found.forEach((b, ino) -> {
      if (expected.containsKey(ino)) {
        mine.put(b, ino);
      }
    });
    assertEquals(wanted, mine, "ownership records");
  }

  private static long blocks(List<Extent> extents) {
    return extents.stream().mapToLong(Extent::length).sum();
  }

  private static List<Extent> concat(List<Extent> a, List<Extent> b) {
    List<Extent> all = new ArrayList<>(a);
    all.addAll(b);
    return all;
  }

  private static void assertDisjoint(List<Extent> extents) {
    List<Extent> sorted = new ArrayList<>(extents);
    Collections.sort(sorted, (x, y) -> Long.compare(x.start(), y.start()));
    for (int i = 1; i < sorted.size(); i++) {
      Extent prev = sorted.get(i - 1);
      if (prev.start() + prev.length() > sorted.get(i).start()) {
        fail("handed out twice: " + prev + " and " + sorted.get(i));
      }
    }
  }

  private void assertDisjointInsideTheDataArea(List<Extent> extents) {
    assertDisjoint(extents);
    for (Extent e : extents) {
      assertTrue(e.length() > 0 && e.start() >= FIRST_BLOCK
          && e.start() + e.length() <= FIRST_BLOCK + total(), "outside the data area: " + e);
    }
  }

  /** Waits for an allocator's asynchronous work, bounded for a loaded machine. */
  protected static void await(BooleanSupplier condition, String what) throws InterruptedException {
    long deadline = System.nanoTime() + 20_000_000_000L;
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        fail("timed out waiting until " + what);
      }
      Thread.sleep(5);
    }
  }
}

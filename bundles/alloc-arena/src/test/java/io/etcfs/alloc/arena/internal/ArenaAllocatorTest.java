package io.etcfs.alloc.arena.internal;

import static io.etcfs.alloc.arena.internal.TestFs.FIRST_BLOCK;
import static io.etcfs.alloc.arena.internal.TestFs.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.alloc.arena.internal.TestFs.Node;
import io.etcfs.spi.alloc.Allocator;
import io.etcfs.spi.alloc.Extent;
import io.etcfs.spi.alloc.NoSpaceException;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.Op;
import io.etcfs.testing.MemoryMetaStore;
import io.etcfs.testing.TestMembership;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(20)
class ArenaAllocatorTest {
  private final TestFs fs = new TestFs(4, 64);

  @AfterEach
  void close() {
    fs.close();
  }

  @Test
  void namesItsBackendAndCountsTheWholeDevice() {
    Node n = fs.node("n1");
    assertEquals("arena", n.alloc.backend());
    assertEquals(256, n.alloc.totalBlocks());
    assertEquals(256, n.alloc.freeBlocks());
  }

  @Test
  void refusesAMissingFsNameAndAnUnformattedFilesystem() {
    TestMembership m = new TestMembership(fs.store, TestFs.FS, "n1");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> new ArenaAllocator(fs.store, m, TestFs.config("", "n1", 60, 0)));
    assertEquals("io.etcfs.alloc.arena: fsName is not set", e.getMessage());
    try (MemoryMetaStore empty = new MemoryMetaStore()) {
      TestMembership m2 = new TestMembership(empty, TestFs.FS, "n1");
      IllegalStateException u = assertThrows(IllegalStateException.class,
          () -> new ArenaAllocator(empty, m2, TestFs.config(TestFs.FS, "n1", 60, 0)));
      assertTrue(u.getMessage().contains("not formatted"), u.getMessage());
    }
  }

  @Test
  void sequentialAllocationsLandContiguously() throws Exception {
    Node n = fs.node("n1");
    Extent a = single(n.allocate(8, -1));
    Extent b = single(n.allocate(8, a.end()));
    Extent c = single(n.allocate(4, -1));
    assertEquals(a.end(), b.start());
    assertEquals(b.end(), c.start());
    assertEquals(256 - 20, n.alloc.freeBlocks());
  }

  @Test
  void takesTheGoalWhenItIsFree() throws Exception {
    Node n = fs.node("n1");
    Extent a = single(n.allocate(16, -1));
    n.alloc.abandon(List.of(a));
    assertEquals(new Extent(a.start() + 5, 3), single(n.allocate(3, a.start() + 5)));
  }

  @Test
  void aLargeRequestSpansArenasAsSeveralExtents() throws Exception {
    Node n = fs.node("n1");
    List<Extent> got = n.allocate(100, -1);
    assertEquals(100, got.stream().mapToLong(Extent::length).sum());
    assertTrue(got.size() >= 2, got.toString());
    assertEquals(2, fs.claims().size());
    assertEquals(156, n.alloc.freeBlocks());
  }

  @Test
  void claimsRecordTheNodeAndItsGeneration() throws Exception {
    Node n = fs.node("n1");
    n.allocate(1, -1);
    String claim = fs.claims().get(0).valueString();
    assertTrue(claim.contains("node=n1"), claim);
    assertTrue(claim.contains("generation=" + n.membership.generation()), claim);
  }

  @Test
  void aFencedNodeNeitherAllocatesNorClaims() {
    Node n = fs.node("n1");
    n.membership.leave();
    assertThrows(IllegalStateException.class, () -> n.allocate(1, -1));
    assertEquals(0, fs.claims().size());
    assertEquals(256, n.alloc.freeBlocks());
  }

  @Test
  void aClaimRejectedByTheGenerationGuardFailsWithoutReserving() throws Exception {
    Node n = fs.node("n1");
    // The member key is gone but the node has not noticed yet (isFenced() still false).
    fs.store.commit(new io.etcfs.spi.meta.Txn().then(Op.delete(n.membership.memberKey())));
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> n.allocate(1, -1));
    assertTrue(e.getMessage().contains("no longer a member"), e.getMessage());
    assertEquals(0, fs.claims().size());
    assertEquals(256, n.alloc.freeBlocks());
  }

  @Test
  void enospcOnAFullDeviceCorruptsNothing() throws Exception {
    Node n = fs.node("n1");
    List<Extent> all = n.allocate(256, -1);
    assertTrue(n.commit(7, all, List.of()));
    Map<Integer, Map<Long, Ref>> before = fs.reverseMap();
    NoSpaceException e = assertThrows(NoSpaceException.class, () -> n.allocate(1, -1));
    assertTrue(e.getMessage().startsWith("no space for 1 blocks"), e.getMessage());
    assertEquals(before, fs.reverseMap());
    assertEquals(0, n.alloc.freeBlocks());
    assertTrue(n.commit(7, List.of(), List.of(new Extent(FIRST_BLOCK + 10, 2))));
    assertEquals(new Extent(FIRST_BLOCK + 10, 2), single(n.allocate(2, -1)));
  }

  @Test
  void aRequestLargerThanWhatIsLeftReservesNothing() throws Exception {
    Node n = fs.node("n1");
    n.commit(7, n.allocate(200, -1), List.of());
    assertThrows(NoSpaceException.class, () -> n.allocate(57, -1));
    assertEquals(56, n.alloc.freeBlocks());
    assertEquals(56, n.allocate(56, -1).stream().mapToLong(Extent::length).sum());
  }

  @Test
  void anotherNodesArenasAreNotUsed() throws Exception {
    Node a = fs.node("a");
    Node b = fs.node("b");
    a.commit(1, a.allocate(64 * 3, -1), List.of());
    b.allocate(60, -1);
    assertThrows(NoSpaceException.class, () -> b.allocate(5, -1));
  }

  @Test
  void releasingASubRangeSplitsTheRecordedExtent() throws Exception {
    Node n = fs.node("n1");
    Extent e = single(n.allocate(10, -1));
    assertTrue(n.commit(5, List.of(e), List.of()));
    Extent hole = new Extent(e.start() + 3, 4);
    List<Op> ops = n.alloc.commitOps(5, List.of(), List.of(hole));
    assertEquals(2, ops.size(), ops.toString());
    assertTrue(ops.stream().allMatch(op -> op instanceof Op.Put), ops.toString());
    assertTrue(n.commit(5, List.of(), List.of(hole)));
    Map<Long, Ref> arena = fs.reverseMap().values().iterator().next();
    assertEquals(Map.of(e.start(), new Ref(5, 3), e.start() + 7, new Ref(5, 3)), arena);
    assertEquals(256 - 6, n.alloc.freeBlocks());
    assertEquals(hole, single(n.allocate(4, hole.start())));
  }

  @Test
  void releasedBlocksAreFreeWhenCommittedReturnsWithOrWithoutTheRevision() throws Exception {
    Node n = fs.node("n1");
    Extent e = single(n.allocate(16, -1));
    assertTrue(n.commit(5, List.of(e), List.of()));
    assertTrue(n.commit(5, List.of(), List.of(new Extent(e.start(), 4)), true));
    assertEquals(256 - 12, n.alloc.freeBlocks(), "freed once the watch showed the commit");
    assertTrue(n.commit(5, List.of(), List.of(new Extent(e.start() + 4, 4)), false));
    assertEquals(256 - 8, n.alloc.freeBlocks(), "freed by re-reading the arena");
  }

  @Test
  void commitsThatContinueRecordedExtentsGrowTheirKeys() throws Exception {
    Node n = fs.node("n1");
    long s = single(n.allocate(8, -1)).start();
    assertTrue(n.commit(5, List.of(new Extent(s, 2), new Extent(s + 4, 2)), List.of()));
    // One commit continuing both recorded extents: both keys grow (their values read at once).
    assertTrue(n.commit(5, List.of(new Extent(s + 2, 1), new Extent(s + 6, 1)), List.of()));
    assertEquals(Map.of(s, new Ref(5, 3), s + 4, new Ref(5, 3)),
        fs.reverseMap().values().iterator().next());
    // Another inode's blocks right after a key never grow it.
    assertTrue(n.commit(6, List.of(new Extent(s + 3, 1)), List.of()));
    assertEquals(Map.of(s, new Ref(5, 3), s + 3, new Ref(6, 1), s + 4, new Ref(5, 3)),
        fs.reverseMap().values().iterator().next());
  }

  @Test
  void releasingAcrossSeveralRecordedExtentsDeletesAndTrims() throws Exception {
    Node n = fs.node("n1");
    Extent a = single(n.allocate(4, -1));
    Extent b = single(n.allocate(4, a.end()));
    n.commit(5, List.of(a), List.of());
    n.commit(5, List.of(b), List.of());
    n.commit(5, List.of(), List.of(new Extent(a.start() + 2, 5)));
    assertEquals(Map.of(a.start(), new Ref(5, 2), b.start() + 3, new Ref(5, 1)),
        fs.reverseMap().values().iterator().next());
    assertEquals(256 - 3, n.alloc.freeBlocks());
  }

  @Test
  void refusesToReleaseAnotherInodesBlocks() throws Exception {
    Node n = fs.node("n1");
    Extent e = single(n.allocate(4, -1));
    n.commit(5, List.of(e), List.of());
    assertThrows(IllegalStateException.class,
        () -> n.alloc.commitOps(6, List.of(), List.of(e)));
  }

  @Test
  void refusesToReferenceAndReleaseTheSameBlocksInOneCommit() throws Exception {
    Node n = fs.node("n1");
    Extent e = single(n.allocate(4, -1));
    assertThrows(IllegalArgumentException.class,
        () -> n.alloc.commitOps(5, List.of(e), List.of(new Extent(e.start() + 1, 1))));
  }

  @Test
  void refusesToRecordBlocksItDidNotReserve() throws Exception {
    Node n = fs.node("n1");
    Extent e = single(n.allocate(4, -1));
    assertThrows(IllegalStateException.class,
        () -> n.alloc.commitOps(5, List.of(new Extent(e.end(), 1)), List.of()));
  }

  @Test
  void aFailedCommitThenAbandonReturnsTheBlocks() throws Exception {
    Node n = fs.node("n1");
    Extent e = single(n.allocate(4, -1));
    n.membership.leave();
    assertFalse(n.commit(5, List.of(e), List.of()));
    assertEquals(256, n.alloc.freeBlocks());
    assertTrue(fs.reverseMap().isEmpty());
  }

  @Test
  void blocksFreedByAnotherNodeFindTheirWayBackToTheOwner() throws Exception {
    Node a = fs.node("a");
    Node b = fs.node("b");
    Extent e = single(a.allocate(8, -1));
    a.commit(9, List.of(e), List.of());
    await(() -> b.alloc.freeBlocks() == 248, "b sees a's commit");
    assertTrue(b.commit(9, List.of(), List.of(new Extent(e.start(), 6))));
    await(() -> a.alloc.freeBlocks() == 254, "a sees b's release");
    assertEquals(new Extent(e.start(), 6), single(a.allocate(6, e.start())));
    assertEquals(Map.of(e.start() + 6, new Ref(9, 2)), fs.reverseMap().values().iterator().next());
  }

  /** In place only over this node's own arenas, and only blocks the inode references. */
  @Test
  void permitsOverwritesInPlaceOnlyOfTheInodesBlocksInArenasThisNodeOwns() throws Exception {
    Node a = fs.node("a");
    Node b = fs.node("b");
    Extent e = single(a.allocate(8, -1));
    assertNull(a.alloc.overwrite(9, e), "allocated, not yet referenced");
    a.commit(9, List.of(e), List.of());
    try (Allocator.InPlace p = a.alloc.overwrite(9, new Extent(e.start() + 2, 4))) {
      assertNotNull(p);
    }
    assertNull(a.alloc.overwrite(8, e), "another inode's blocks");
    assertNull(a.alloc.overwrite(9, new Extent(e.start(), 9)), "one block past the inode's");
    await(() -> b.alloc.freeBlocks() == 248, "b sees a's commit");
    assertNull(b.alloc.overwrite(9, e), "an arena of another node: it could reuse them at once");
    a.membership.leave();
    assertNull(a.alloc.overwrite(9, e), "fenced");
  }

  @Test
  void inPlaceOffGivesNoPermit() throws Exception {
    fs.inPlace = false;
    Node a = fs.node("a");
    Extent e = single(a.allocate(8, -1));
    a.commit(9, List.of(e), List.of());
    assertNull(a.alloc.overwrite(9, e), "inPlace=false: copy-on-write only");
  }

  /**
   * While a write in place is open, a release of those blocks by another node's commit (the lock
   * lapsed here) is not applied, so the blocks cannot be handed out again before the write ends.
   */
  @Test
  void aReleaseByAnotherNodeWaitsForTheWritesInPlaceInFlight() throws Exception {
    Node a = fs.node("a");
    Node b = fs.node("b");
    Extent e = single(a.allocate(8, -1));
    a.commit(9, List.of(e), List.of());
    await(() -> b.alloc.freeBlocks() == 248, "b sees a's commit");
    Allocator.InPlace p = a.alloc.overwrite(9, e);
    assertNotNull(p);
    assertTrue(b.commit(9, List.of(), List.of(e)));
    // Not a readiness wait: a window in which a wrong free would show (the watch delivers in
    // well under a millisecond here; a slow one only makes the check weaker, never flaky).
    Thread.sleep(300);
    assertEquals(248, a.alloc.freeBlocks(), "freed while a write in place was in flight");
    p.close();
    await(() -> a.alloc.freeBlocks() == 256, "a sees b's release once the write ended");
    assertEquals(e, single(a.allocate(8, e.start())));
  }

  @Test
  void aRestartedAllocatorRebuildsItsArenasFromTheReverseMap() throws Exception {
    Node n = fs.node("n1");
    List<Extent> kept = n.allocate(40, -1);
    n.commit(3, kept, List.of());
    n.commit(3, n.allocate(2, -1), List.of(new Extent(kept.get(0).start(), 1)));
    n.commit(3, List.of(), List.of(new Extent(kept.get(0).start() + 10, 5)));
    n.allocate(5, -1); // reserved, never committed: the crash frees it
    Node again = fs.restart(n);
    // n's view is fed by its watch; the restarted one is read from the store.
    await(() -> n.alloc.ownedView().equals(again.alloc.ownedView()), "n's view is current");
    assertEquals(n.alloc.ownedView(), again.alloc.ownedView());
    assertEquals(256 - 36, again.alloc.freeBlocks());
    List<Extent> fresh = again.allocate(220, -1);
    for (Extent x : fresh) {
      for (Map<Long, Ref> arena : fs.reverseMap().values()) {
        arena.forEach((start, r) -> assertTrue(x.end() <= start || x.start() >= start + r.length(),
            x + " overlaps " + start + "+" + r.length()));
      }
    }
  }

  @Test
  void idleEmptyArenasAreReleasedAndDataKeepsAClaim() throws Exception {
    Node n = fs.node("n1");
    List<Extent> data = n.allocate(64 + 4, -1);
    Extent last = data.get(data.size() - 1);
    n.commit(2, data.subList(0, data.size() - 1), List.of());
    n.alloc.abandon(List.of(last));
    n.alloc.releaseIdleArenas(0);
    assertEquals(1, fs.claims().size());
    n.commit(2, List.of(), data.subList(0, data.size() - 1));
    n.alloc.releaseIdleArenas(Long.MAX_VALUE);
    assertEquals(1, fs.claims().size());
    n.alloc.releaseIdleArenas(0);
    assertEquals(0, fs.claims().size());
    assertEquals(256, n.alloc.freeBlocks());
    n.allocate(1, -1);
    assertEquals(1, fs.claims().size());
  }

  @Test
  void theBackgroundCheckReleasesIdleArenas() throws Exception {
    Node n = fs.node("n1", 0, 1);
    n.alloc.abandon(n.allocate(3, -1));
    assertEquals(1, fs.claims().size());
    await(() -> fs.claims().isEmpty(), "the idle arena is released");
  }

  @Test
  void aCleanLeaveReleasesEveryArenaWithoutReservations() throws Exception {
    Node n = fs.node("n1");
    List<Extent> got = n.allocate(64 + 64 + 10, -1);
    n.commit(4, got.subList(0, 1), List.of());
    assertEquals(3, fs.claims().size());
    n.alloc.abandon(got.subList(1, got.size()));
    n.allocate(2, -1);
    n.alloc.deactivate();
    assertEquals(1, fs.claims().size());
    Node other = fs.node("n2");
    other.allocate(64 + 64, -1);
    assertThrows(NoSpaceException.class, () -> other.allocate(64, -1));
  }

  @Test
  void theFreeCountFollowsOtherNodesCommits() throws Exception {
    Node a = fs.node("a");
    Node b = fs.node("b");
    a.commit(1, a.allocate(30, -1), List.of());
    b.commit(2, b.allocate(20, -1), List.of());
    await(() -> a.alloc.freeBlocks() == 206 && b.alloc.freeBlocks() == 206, "counts agree");
    assertTrue(fs.store.get(Keys.of("/etcfs/fs1/fs")).isPresent());
  }

  private static Extent single(List<Extent> extents) {
    assertEquals(1, extents.size(), extents.toString());
    return extents.get(0);
  }

  @Test
  void recoveryReleasesOnlyTheDeadIncarnationsClaimsAndKeepsWhatItCommitted() throws Exception {
    Node dead = fs.node("n1");
    List<Extent> committed = dead.allocate(40, -1);
    dead.commit(3, committed, List.of());
    dead.allocate(5, -1); // reserved, never committed: lost with the node
    Node live = fs.node("n2");
    live.commit(4, live.allocate(3, -1), List.of());
    assertEquals(2, fs.claims().size());
    String deadArenas = fs.claims().stream().filter(kv -> kv.valueString().contains("node=n1\n"))
        .map(kv -> Integer.toString(Integer.parseInt(kv.keyString().replaceAll(".*/", ""), 16)))
        .toList().toString();
    ArenaRecovery recovery = new ArenaRecovery(fs.store, live.membership,
        TestFs.config(TestFs.FS, "n2", 60, 0));
    dead.membership.leave(); // its key is gone, as after a lease expiry

    String line = recovery.recover(new io.etcfs.spi.fencing.DeadNode("n1",
        dead.membership.generation()));

    assertEquals("arenas released " + deadArenas, line);
    assertEquals(1, fs.claims().size(), "only n2's claim is left");
    assertEquals("arenas released none", recovery.recover(new io.etcfs.spi.fencing.DeadNode(
        "n1", dead.membership.generation())), "idempotent");
    // The next claimer of that arena rebuilds it: the 40 committed blocks stay referenced, the 5
    // reserved ones are free again. Everything outside n2's arena: 3 arenas less 40 blocks.
    Node next = fs.node("n3");
    List<Extent> fresh = next.allocate(3 * 64 - 40, -1);
    assertEquals(3 * 64 - 40, fresh.stream().mapToLong(Extent::length).sum());
    for (Extent x : fresh) {
      for (Extent c : committed) {
        assertTrue(x.end() <= c.start() || x.start() >= c.end(), x + " overlaps " + c);
      }
    }
  }

  @Test
  void recoveryOfAnotherGenerationOfTheSameNameTouchesNothing() throws Exception {
    Node n = fs.node("n1");
    n.commit(3, n.allocate(4, -1), List.of());
    ArenaRecovery recovery = new ArenaRecovery(fs.store, n.membership,
        TestFs.config(TestFs.FS, "n1", 60, 0));
    assertEquals("arenas released none", recovery.recover(new io.etcfs.spi.fencing.DeadNode(
        "n1", n.membership.generation() - 1)));
    assertEquals(1, fs.claims().size());
  }
}

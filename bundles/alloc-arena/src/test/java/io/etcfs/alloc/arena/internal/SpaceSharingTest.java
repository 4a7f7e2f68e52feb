package io.etcfs.alloc.arena.internal;

import static io.etcfs.alloc.arena.internal.TestFs.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.alloc.arena.internal.TestFs.Node;
import io.etcfs.spi.alloc.Extent;
import io.etcfs.spi.alloc.NoSpaceException;
import io.etcfs.spi.meta.Keys;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Space between nodes (issue 12): a node out of space gets the arenas another node can spare,
 * never one with a write in flight or one its own promises need; promised blocks go to nothing
 * but the allocations that spend them, and statfs never counts them.
 */
@Timeout(60)
class SpaceSharingTest {
  /** Two arenas of 64 blocks. */
  private final TestFs fs = new TestFs(2, 64);

  @AfterEach
  void close() {
    fs.close();
  }

  @Test
  void aNodeOutOfSpaceGetsTheArenaAnotherNodeCanSpare() throws Exception {
    Node a = fs.node("a");
    Node b = fs.node("b");
    assertTrue(a.commit(1, a.allocate(4, -1), List.of()));
    List<Extent> got = b.allocate(124, -1);
    assertEquals(124, blocks(got));
    assertTrue(b.commit(2, got, List.of()));
    assertEquals(Map.of(1L, 4, 2L, 124), countsByInode());
    assertEquals(0, b.alloc.freeBlocks());
    assertEquals(0, fs.store.prefix(Keys.of("/etcfs/fs1/wants/"), 0).kvs().size(),
        "the want is withdrawn once answered");
  }

  @Test
  void anArenaWithAWriteInFlightIsKept() throws Exception {
    fs.askWaitMillis = 300;
    Node a = fs.node("a");
    Node b = fs.node("b");
    List<Extent> inFlight = a.allocate(4, -1);
    NoSpaceException e = assertThrows(NoSpaceException.class, () -> b.allocate(124, -1));
    assertTrue(e.getMessage().contains("none to spare"), e.getMessage());
    assertEquals(1, a.alloc.ownedView().size(), "a kept the arena it is writing to");
    assertTrue(a.commit(1, inFlight, List.of()));
    await(() -> allocates(b, 124), "b gets a's spare blocks once nothing is in flight there");
    assertEquals(0, b.alloc.freeBlocks());
  }

  @Test
  void promisedBlocksGoOnlyToTheAllocationsThatSpendThem() throws Exception {
    Node a = fs.node("a");
    a.alloc.reserve(100);
    assertEquals(28, a.alloc.freeBlocks(), "statfs counts no promised block");
    assertThrows(NoSpaceException.class, () -> a.allocate(29, -1));
    assertTrue(a.commit(1, a.allocate(28, -1), List.of()));
    assertThrows(NoSpaceException.class, () -> a.alloc.reserve(1));
    List<Extent> spent = a.alloc.allocate(100, -1, 100);
    assertEquals(100, blocks(spent));
    assertTrue(a.commit(2, spent, List.of()));
    assertEquals(0, a.alloc.freeBlocks());
  }

  @Test
  void anAbandonedAllocationKeepsThePromiseItIsToldTo() throws Exception {
    Node a = fs.node("a");
    a.alloc.reserve(10);
    a.alloc.abandon(a.alloc.allocate(10, -1, 10), 10);
    assertEquals(118, a.alloc.freeBlocks());
    List<Extent> again = a.alloc.allocate(10, -1, 10);
    a.alloc.abandon(again, 0);
    assertEquals(128, a.alloc.freeBlocks());
  }

  @Test
  void aNodeKeepsTheArenasItsPromisesNeed() throws Exception {
    fs.askWaitMillis = 300;
    Node a = fs.node("a");
    Node b = fs.node("b");
    a.alloc.reserve(100);
    assertThrows(NoSpaceException.class, () -> b.allocate(1, -1));
    assertEquals(2, a.alloc.ownedView().size());
    assertEquals(100, blocks(a.alloc.allocate(100, -1, 100)), "a's promise still holds");
  }

  @Test
  void aFullDeviceAnswersAtOnceWithoutAsking() throws Exception {
    fs.askWaitMillis = 30_000;
    Node a = fs.node("a");
    Node b = fs.node("b");
    assertTrue(a.commit(1, a.allocate(128, -1), List.of()));
    await(() -> b.alloc.freeBlocks() == 0, "b's mirror shows the device full");
    long start = System.nanoTime();
    assertThrows(NoSpaceException.class, () -> b.allocate(1, -1));
    assertTrue(System.nanoTime() - start < 10_000_000_000L, "ENOSPC waited for nobody");
  }

  @Test
  void unreservedSpaceIsGivenAgain() throws Exception {
    Node a = fs.node("a");
    Node b = fs.node("b");
    a.alloc.reserve(100);
    a.alloc.unreserve(100);
    assertEquals(128, a.alloc.freeBlocks());
    assertEquals(128, blocks(b.allocate(128, -1)));
  }

  private static boolean allocates(Node n, long blocks) {
    try {
      return blocks(n.allocate(blocks, -1)) == blocks;
    } catch (NoSpaceException e) {
      return false;
    }
  }

  private static long blocks(List<Extent> extents) {
    return extents.stream().mapToLong(Extent::length).sum();
  }

  /** Blocks per inode in the reverse map, failing if any block is recorded twice. */
  private Map<Long, Integer> countsByInode() {
    TreeSet<Long> seen = new TreeSet<>();
    Map<Long, Integer> out = new java.util.TreeMap<>();
    fs.reverseMap().values().forEach(arena -> arena.forEach((start, ref) -> {
      for (long blk = start; blk < start + ref.length(); blk++) {
        assertTrue(seen.add(blk), "block " + blk + " recorded twice");
      }
      out.merge(ref.ino(), (int) ref.length(), Integer::sum);
    }));
    return out;
  }
}

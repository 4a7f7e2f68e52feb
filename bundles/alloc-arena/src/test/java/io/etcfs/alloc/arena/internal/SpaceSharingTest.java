package io.etcfs.alloc.arena.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.alloc.arena.internal.TestFs.Node;
import io.etcfs.spi.alloc.Extent;
import io.etcfs.spi.alloc.NoSpaceException;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Promises (issue 12): promised blocks go to nothing but the allocations that spend them, and
 * statfs never counts them.
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

  private static long blocks(List<Extent> extents) {
    return extents.stream().mapToLong(Extent::length).sum();
  }
}

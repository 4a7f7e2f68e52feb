package io.etcfs.alloc.shared.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.spi.alloc.Extent;
import java.util.List;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class RunsTest {
  @Test
  void addsMergeAndRemovesSplit() {
    Runs r = Runs.of(List.of(new Extent(10, 5), new Extent(15, 5), new Extent(30, 2)));
    assertEquals(List.of(new Extent(10, 10), new Extent(30, 2)), r.extents());
    r.remove(new Extent(12, 3));
    assertEquals(List.of(new Extent(10, 2), new Extent(15, 5), new Extent(30, 2)), r.extents());
    r.remove(new Extent(16, 20));
    assertEquals(List.of(new Extent(10, 2), new Extent(15, 1)), r.extents());
    assertTrue(r.overlaps(new Extent(11, 1)));
    assertFalse(r.overlaps(new Extent(12, 3)));
    assertEquals(3, r.blocks());
  }

  @Test
  void picksFromTheGoalThenWraps() {
    TreeMap<Long, Long> free = new TreeMap<>();
    free.put(100L, 10L);
    free.put(200L, 10L);
    free.put(300L, 10L);
    assertEquals(List.of(new Extent(205, 5), new Extent(300, 10), new Extent(100, 3)),
        SharedAllocator.pick(free, 18, 205));
    assertEquals(List.of(new Extent(100, 10), new Extent(200, 2)),
        SharedAllocator.pick(free, 12, -1));
    assertEquals(List.of(new Extent(300, 4)), SharedAllocator.pick(free, 4, 250));
  }
}

package io.etcfs.core.fs;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

class GoneOrderTest {
  @Test
  void neighboursAfterThenBeforeNewestPlaceOnlyBounded() {
    GoneOrder g = new GoneOrder();
    LongStream.rangeClosed(1, 10).forEach(g::add);
    assertEquals(List.of(5L, 6L, 7L, 8L), g.around(5, 4, i -> false));
    assertEquals(List.of(9L, 10L, 8L, 7L), g.around(9, 4, i -> false));
    assertEquals(List.of(5L, 7L, 9L), g.around(5, 3, i -> i % 2 == 0));
    assertEquals(List.of(42L), g.around(42, 4, i -> false), "never let go here");
    g.add(6); // let go again: counted at its newest place
    assertEquals(List.of(5L, 7L, 8L, 9L), g.around(5, 4, i -> false));
    assertEquals(List.of(6L, 10L, 9L, 8L), g.around(6, 4, i -> false));
  }

  @Test
  void theOldestAreForgotten() {
    GoneOrder g = new GoneOrder();
    LongStream.range(0, GoneOrder.CAPACITY + 10).forEach(g::add);
    assertEquals(List.of(5L), g.around(5, 4, i -> false));
    assertEquals(List.of(10L, 11L, 12L), g.around(10, 3, i -> false));
    long last = GoneOrder.CAPACITY + 9;
    assertEquals(List.of(last, last - 1, last - 2), g.around(last, 3, i -> false));
  }
}

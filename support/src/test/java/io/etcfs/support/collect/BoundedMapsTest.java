package io.etcfs.support.collect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class BoundedMapsTest {
  @Test
  void theEldestPutGoesFirstUnlessAccessOrderKeepsWhatWasRead() {
    Map<Integer, String> byPut = BoundedMaps.of(2, false);
    Map<Integer, String> byUse = BoundedMaps.synchronizedOf(2, true);
    for (Map<Integer, String> m : List.of(byPut, byUse)) {
      m.put(1, "a");
      m.put(2, "b");
      m.get(1);
      m.put(3, "c");
    }
    assertEquals(List.of(2, 3), List.copyOf(byPut.keySet()));
    assertEquals(List.of(1, 3), List.copyOf(byUse.keySet()));
  }

  @Test
  void aCapacityMustHoldSomething() {
    assertThrows(IllegalArgumentException.class, () -> BoundedMaps.of(0, false));
  }
}

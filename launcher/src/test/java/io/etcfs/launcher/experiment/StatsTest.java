package io.etcfs.launcher.experiment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class StatsTest {
  @Test
  void oddCountsTakeTheMiddleValue() {
    assertEquals(new Stats(3, 1, 5, 9), Stats.of(List.of(9.0, 1.0, 5.0)));
    assertEquals(new Stats(1, 4, 4, 4), Stats.of(List.of(4.0)));
  }

  @Test
  void evenCountsTakeTheMeanOfTheMiddleTwo() {
    assertEquals(new Stats(4, 1, 3.5, 10), Stats.of(List.of(10.0, 3.0, 1.0, 4.0)));
  }

  @Test
  void noValuesHaveNoStatistics() {
    assertThrows(IllegalArgumentException.class, () -> Stats.of(List.of()));
  }
}

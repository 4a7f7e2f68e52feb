package io.etcfs.support.retry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class BackoffTest {
  private final Backoff b = new Backoff(Duration.ofMillis(50), Duration.ofSeconds(2));

  @Test
  void doublesFromTheFirstWaitUpToTheLongest() {
    assertEquals(Duration.ZERO, b.delay(0));
    assertEquals(Duration.ofMillis(50), b.delay(1));
    assertEquals(Duration.ofMillis(100), b.delay(2));
    assertEquals(Duration.ofMillis(1600), b.delay(6));
    assertEquals(Duration.ofSeconds(2), b.delay(7));
    assertEquals(Duration.ofSeconds(2), b.delay(1000)); // no overflow
  }

  @Test
  void aJitteredWaitIsNeverLongerThanTheDelayNorZero() {
    for (int i = 0; i < 1000; i++) {
      Duration d = b.jittered(3);
      assertTrue(d.compareTo(Duration.ZERO) > 0 && d.compareTo(b.delay(3)) <= 0, d.toString());
    }
    assertEquals(Duration.ZERO, b.jittered(0));
  }

  @Test
  void theLongestWaitIsAtLeastTheFirst() {
    assertThrows(IllegalArgumentException.class,
        () -> new Backoff(Duration.ofSeconds(2), Duration.ofSeconds(1)));
    assertThrows(IllegalArgumentException.class,
        () -> new Backoff(Duration.ZERO, Duration.ofSeconds(1)));
  }
}

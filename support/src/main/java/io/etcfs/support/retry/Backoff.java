package io.etcfs.support.retry;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * How long to wait before the next attempt of something that failed: {@code first} before the
 * second attempt, doubling with each failure up to {@code max}. {@link #jittered} spreads the
 * waits of several nodes that failed together (a lost commit race) so they do not collide again.
 *
 * @param first the wait after the first failure
 * @param max the longest wait
 */
public record Backoff(Duration first, Duration max) {
  public Backoff {
    if (first.isNegative() || first.isZero() || max.compareTo(first) < 0) {
      throw new IllegalArgumentException("backoff from " + first + " to " + max);
    }
  }

  /** The wait after failure number {@code failures} (1 for the first): 0 for none yet. */
  public Duration delay(int failures) {
    if (failures <= 0) {
      return Duration.ZERO;
    }
    long firstNanos = first.toNanos();
    int shift = Math.min(failures - 1, 62 - (63 - Long.numberOfLeadingZeros(firstNanos)));
    long nanos = shift <= 0 ? firstNanos : firstNanos << shift;
    return Duration.ofNanos(Math.min(max.toNanos(), nanos));
  }

  /** A uniformly random wait in (0, {@link #delay}]: 0 for none yet. */
  public Duration jittered(int failures) {
    long nanos = delay(failures).toNanos();
    return nanos == 0 ? Duration.ZERO
        : Duration.ofNanos(ThreadLocalRandom.current().nextLong(nanos) + 1);
  }

  /**
   * Sleeps {@link #jittered} on this thread.
   *
   * @throws InterruptedException if interrupted (the interrupt is kept)
   */
  public void sleepJittered(int failures) throws InterruptedException {
    long nanos = jittered(failures).toNanos();
    if (nanos > 0) {
      Thread.sleep(nanos / 1_000_000, (int) (nanos % 1_000_000));
    }
  }
}

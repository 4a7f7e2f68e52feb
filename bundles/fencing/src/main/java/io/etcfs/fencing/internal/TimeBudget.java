package io.etcfs.fencing.internal;

import io.etcfs.spi.fencing.FenceException;
import java.time.Duration;

/**
 * The time one fence-agent call may take, shared by every command the call runs: a caller gives
 * an agent one timeout, not one per command. Measured on the monotonic clock.
 */
final class TimeBudget {
  private final Duration total;
  private final long deadline;

  TimeBudget(Duration total) {
    this.total = total;
    this.deadline = System.nanoTime() + Math.max(0, total.toNanos());
  }

  Duration total() {
    return total;
  }

  /** What is left, or a {@link FenceException} naming {@code what} if nothing is. */
  Duration remaining(String what) throws FenceException {
    long left = deadline - System.nanoTime();
    if (left <= 0) {
      throw new FenceException(what + " timed out after " + text(total));
    }
    return Duration.ofNanos(left);
  }

  /** {@code 30 s}, or {@code 500 ms} for a timeout that is not a whole number of seconds. */
  static String text(Duration d) {
    return d.toMillis() % 1000 == 0 ? d.toSeconds() + " s" : d.toMillis() + " ms";
  }
}

package io.etcfs.testing;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * Waits for a condition a test cannot be told of (a watch's view, a background give-back):
 * polls it every few milliseconds and fails, naming what it waited for, past a bound that is
 * generous on a slow machine. Never a fixed sleep in place of readiness.
 */
public final class Eventually {
  /** The bound unless a test names one. */
  public static final Duration BOUND = Duration.ofSeconds(30);

  private Eventually() {}

  public static void eventually(String what, BooleanSupplier check) throws InterruptedException {
    eventually(what, BOUND, check);
  }

  public static void eventually(String what, Duration bound, BooleanSupplier check)
      throws InterruptedException {
    long deadline = System.nanoTime() + bound.toNanos();
    while (!check.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("waited in vain for " + what + " (" + bound.toSeconds() + " s)");
      }
      Thread.sleep(5);
    }
  }
}

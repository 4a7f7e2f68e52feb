package io.etcfs.core.fs;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A write that finds no space and nothing in flight answers ENOSPC at once, unless a file lost
 * its last name here a moment ago: what that frees may not show yet, so it waits briefly and
 * asks again.
 */
@Timeout(30)
class ReleasingTest {
  @Test
  void nothingFreedLatelyMeansNoWait() {
    Releasing r = new Releasing();
    long t0 = System.nanoTime();
    assertFalse(r.awaitOthers(7));
    assertTrue(System.nanoTime() - t0 < Releasing.RECENT_WAIT_MILLIS * 1_000_000L);
  }

  @Test
  void anUnlinkAMomentAgoIsWaitedForBriefly() {
    Releasing r = new Releasing();
    r.unlinked();
    long t0 = System.nanoTime();
    assertTrue(r.awaitOthers(7));
    assertTrue(System.nanoTime() - t0 >= Releasing.RECENT_WAIT_MILLIS * 1_000_000L);
  }
}

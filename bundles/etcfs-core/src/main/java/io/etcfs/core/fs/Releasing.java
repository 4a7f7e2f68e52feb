package io.etcfs.core.fs;

import java.util.HashMap;
import java.util.Map;

/**
 * The last closes being committed (and their unlinked files purged) on this node right now. A
 * release runs after close(2) has returned, so an `rm` of a file just closed can return before
 * its blocks are free: a write that finds no space waits for the releases of other files in
 * flight and asks once more before it answers ENOSPC, as ext4 retries an allocation after the
 * journal commit that frees deleted blocks.
 */
final class Releasing {
  /** Far above a release's commit and purge (milliseconds), far below a stuck caller's patience. */
  static final long WAIT_MILLIS = 5_000;

  private final Map<Long, Integer> inFlight = new HashMap<>();

  synchronized void begin(long ino) {
    inFlight.merge(ino, 1, Integer::sum);
  }

  synchronized void end(long ino) {
    inFlight.computeIfPresent(ino, (k, n) -> n == 1 ? null : n - 1);
    notifyAll();
  }

  /**
   * Waits until no release of a file other than {@code ino} is in flight, or {@link
   * #WAIT_MILLIS} passed. (The file's own release cannot be waited for: it may need the lock
   * its writer holds.)
   *
   * @return whether there was any to wait for: only then may space have come back
   */
  synchronized boolean awaitOthers(long ino) {
    if (!othersThan(ino)) {
      return false;
    }
    long deadline = System.nanoTime() + WAIT_MILLIS * 1_000_000L;
    try {
      while (othersThan(ino)) {
        long left = (deadline - System.nanoTime()) / 1_000_000L;
        if (left <= 0) {
          break;
        }
        wait(left);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return true;
  }

  private boolean othersThan(long ino) {
    return inFlight.size() > (inFlight.containsKey(ino) ? 1 : 0);
  }
}

package io.etcfs.core.fs;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Space that is about to come back on this node. A release runs after close(2) has returned,
 * so an `rm` of a file just closed can return before its blocks are free: the release may be
 * committing (in flight), or not even have reached this node yet — the kernel sends FUSE's
 * release asynchronously, so the unlink can come first and find the file still open, and the
 * file then goes at that release. A write that finds no space waits for both and asks once
 * more before it answers ENOSPC, as ext4 retries an allocation after the journal commit that
 * frees deleted blocks.
 */
final class Releasing {
  /** Far above a release's commit and purge (milliseconds), far below a stuck caller's patience. */
  static final long WAIT_MILLIS = 5_000;
  /**
   * How long a write that finds no space waits for the last close of a file unlinked while open
   * here (milliseconds): far above the kernel's delay in sending a release that is on its way,
   * short for a process that keeps such a file open on purpose. Each such file is waited for
   * once: while it stays open, later writes answer ENOSPC at once.
   */
  static final long ORPHAN_WAIT_MILLIS = 1_000;
  private static final long POLL_MILLIS = 10;

  /**
   * How long after a file lost its last name or closed here a write that finds no space and
   * nothing in flight still waits ({@link #RECENT_WAIT_MILLIS}) before it answers ENOSPC: what
   * that change frees may not show yet (a release the kernel has not sent, an unlink this node's
   * cache has not seen), as CI's intermittent EnospcIT failures showed.
   */
  static final long RECENT_NANOS = 2_000_000_000L;
  static final long RECENT_WAIT_MILLIS = 500;
  private volatile long freedAt = System.nanoTime() - 2 * RECENT_NANOS;

  private final Map<Long, Integer> inFlight = new HashMap<>();
  /** Files unlinked while open here whose close a wait for space outlasted. */
  private final Set<Long> waitedInVain = new HashSet<>();
  private volatile Supplier<Set<Long>> openOrphans = Set::of;

  synchronized void begin(long ino) {
    inFlight.merge(ino, 1, Integer::sum);
  }

  synchronized void end(long ino) {
    inFlight.computeIfPresent(ino, (k, n) -> n == 1 ? null : n - 1);
    freedAt = System.nanoTime();
    notifyAll();
  }

  /** A file lost its last name here: its blocks are free now or at its last close. */
  void unlinked() {
    freedAt = System.nanoTime();
  }

  /** Where the files open here with no name left come from (they go at their last close). */
  void openOrphansFrom(Supplier<Set<Long>> orphans) {
    this.openOrphans = orphans;
  }

  /**
   * Waits until no release of a file other than {@code ino} is in flight, or {@link
   * #WAIT_MILLIS} passed, and until the files unlinked while open here were closed, or {@link
   * #ORPHAN_WAIT_MILLIS} passed. (The file's own release cannot be waited for: it may need the
   * lock its writer holds.)
   *
   * @return whether there was any to wait for: only then may space have come back
   */
  boolean awaitOthers(long ino) {
    Set<Long> orphans = orphansBut(ino);
    synchronized (this) {
      waitedInVain.retainAll(orphans); // closed since: waited for again if reopened and unlinked
      orphans.removeAll(waitedInVain);
      if (!othersThan(ino) && orphans.isEmpty()) {
        return recentlyFreed();
      }
    }
    long start = System.nanoTime();
    long deadline = start + WAIT_MILLIS * 1_000_000L;
    long orphanDeadline = start + ORPHAN_WAIT_MILLIS * 1_000_000L;
    try {
      while (true) {
        long now = System.nanoTime();
        synchronized (this) {
          boolean releases = othersThan(ino);
          if (!releases && orphans.isEmpty() || now - deadline >= 0
              || !releases && now - orphanDeadline >= 0) {
            waitedInVain.addAll(orphans);
            return true;
          }
          wait(Math.max(1, Math.min(POLL_MILLIS, (deadline - now) / 1_000_000L)));
        }
        if (!orphans.isEmpty()) {
          orphans.retainAll(orphansBut(ino)); // read outside: it may read the inodes' records
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return true;
    }
  }

  /** Nothing in flight, but something freed a moment ago: a short wait, then ask again. */
  private boolean recentlyFreed() {
    if (System.nanoTime() - freedAt > RECENT_NANOS) {
      return false;
    }
    try {
      Thread.sleep(RECENT_WAIT_MILLIS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return true;
  }

  private Set<Long> orphansBut(long ino) {
    Set<Long> s = new HashSet<>(openOrphans.get());
    s.remove(ino);
    return s;
  }

  private boolean othersThan(long ino) {
    return inFlight.size() > (inFlight.containsKey(ino) ? 1 : 0);
  }
}

package io.etcfs.core.fs;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongPredicate;

/**
 * The order in which this node let go of its most recent exclusive locks: locks given back
 * together are usually wanted back together — the files a {@code tar x} or a build wrote, given
 * back a second after their closes, are what the same node reads next ({@code git add}, the
 * linker, a test's check) — so a reader that takes one of them again asks for its neighbours in
 * this order in the same round trip ({@link InodeLocks#prefetch}). A hint for directories whose
 * listing this node has not cached; bounded ({@link #CAPACITY} inodes).
 */
final class GoneOrder {
  static final int CAPACITY = 4096;

  private final long[] ring = new long[CAPACITY];
  /** Each recorded inode's sequence number (its slot is {@code seq % CAPACITY}). */
  private final Map<Long, Long> seqOf = new HashMap<>();
  private long next;

  synchronized void add(long ino) {
    int slot = (int) (next % CAPACITY);
    if (next >= CAPACITY) {
      long evicted = ring[slot];
      seqOf.remove(evicted, next - CAPACITY);
    }
    ring[slot] = ino;
    seqOf.put(ino, next);
    next++;
  }

  /**
   * {@code ino} first, then up to {@code max - 1} inodes let go after it, then before it, that
   * {@code skip} does not reject; just {@code ino} if it was not let go recently.
   */
  synchronized List<Long> around(long ino, int max, LongPredicate skip) {
    List<Long> out = new ArrayList<>();
    out.add(ino);
    Long at = seqOf.get(ino);
    if (at == null) {
      return out;
    }
    long oldest = Math.max(0, next - CAPACITY);
    for (long s = at + 1; s < next && out.size() < max; s++) {
      take(s, out, skip);
    }
    for (long s = at - 1; s >= oldest && out.size() < max; s--) {
      take(s, out, skip);
    }
    return out;
  }

  private void take(long seq, List<Long> out, LongPredicate skip) {
    long ino = ring[(int) (seq % CAPACITY)];
    Long current = seqOf.get(ino);
    // an inode let go again later is taken at its newest place only
    if (current != null && current == seq && !skip.test(ino)) {
      out.add(ino);
    }
  }
}

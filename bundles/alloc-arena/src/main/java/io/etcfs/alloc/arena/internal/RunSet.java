package io.etcfs.alloc.arena.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A set of blocks kept as disjoint, coalesced runs [start, end) keyed by start. Memory follows
 * fragmentation rather than arena size, and "the first free run at or after the cursor" — what
 * next-fit allocation asks all the time — is one {@code floorEntry} and one {@code higherEntry}.
 * Not thread-safe.
 */
final class RunSet {
  /** One run of blocks, [start, end). */
  record Run(long start, long end) {
    long length() {
      return end - start;
    }
  }

  private final TreeMap<Long, Long> runs = new TreeMap<>();
  private long size;

  long size() {
    return size;
  }

  boolean isEmpty() {
    return runs.isEmpty();
  }

  void clear() {
    runs.clear();
    size = 0;
  }

  void add(long start, long end) {
    if (start >= end) {
      return;
    }
    long s = start;
    long e = end;
    Map.Entry<Long, Long> lower = runs.floorEntry(start);
    if (lower != null && lower.getValue() >= start) {
      s = lower.getKey();
      e = Math.max(e, lower.getValue());
      drop(lower.getKey());
    }
    Map.Entry<Long, Long> higher = runs.ceilingEntry(s);
    while (higher != null && higher.getKey() <= e) {
      e = Math.max(e, higher.getValue());
      drop(higher.getKey());
      higher = runs.ceilingEntry(s);
    }
    runs.put(s, e);
    size += e - s;
  }

  void remove(long start, long end) {
    for (Run run : overlapping(start, end)) {
      drop(run.start());
      if (run.start() < start) {
        keep(run.start(), start);
      }
      if (run.end() > end) {
        keep(end, run.end());
      }
    }
  }

  /** True if every block of [start, end) is in the set. */
  boolean containsAll(long start, long end) {
    Map.Entry<Long, Long> run = runs.floorEntry(start);
    return run != null && run.getValue() >= end;
  }

  /** The parts of [start, end) in the set, in order. */
  List<Run> intersect(long start, long end) {
    List<Run> out = new ArrayList<>();
    for (Run run : overlapping(start, end)) {
      out.add(new Run(Math.max(run.start(), start), Math.min(run.end(), end)));
    }
    return out;
  }

  /** The first run (clipped to start at {@code from}) with blocks at or after {@code from}. */
  Run firstFrom(long from) {
    Map.Entry<Long, Long> lower = runs.floorEntry(from);
    if (lower != null && lower.getValue() > from) {
      return new Run(from, lower.getValue());
    }
    Map.Entry<Long, Long> higher = runs.higherEntry(from);
    return higher == null ? null : new Run(higher.getKey(), higher.getValue());
  }

  /** The length of the longest run, 0 if empty. */
  long longest() {
    long best = 0;
    for (Map.Entry<Long, Long> r : runs.entrySet()) {
      best = Math.max(best, r.getValue() - r.getKey());
    }
    return best;
  }

  List<Run> runs() {
    List<Run> out = new ArrayList<>();
    runs.forEach((s, e) -> out.add(new Run(s, e)));
    return out;
  }

  private List<Run> overlapping(long start, long end) {
    List<Run> out = new ArrayList<>();
    if (start >= end) {
      return out;
    }
    Map.Entry<Long, Long> lower = runs.floorEntry(start);
    long from = lower != null && lower.getValue() > start ? lower.getKey() : start;
    runs.subMap(from, true, end, false).forEach((s, e) -> out.add(new Run(s, e)));
    return out;
  }

  private void drop(long start) {
    Long end = runs.remove(start);
    size -= end - start;
  }

  private void keep(long start, long end) {
    runs.put(start, end);
    size += end - start;
  }
}

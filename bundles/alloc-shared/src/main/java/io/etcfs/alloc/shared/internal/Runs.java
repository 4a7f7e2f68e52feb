package io.etcfs.alloc.shared.internal;

import io.etcfs.spi.alloc.Extent;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** A set of blocks as disjoint, merged runs (start → length). Not thread-safe. */
final class Runs {
  private final TreeMap<Long, Long> runs = new TreeMap<>();

  static Runs of(List<Extent> extents) {
    Runs r = new Runs();
    extents.forEach(r::add);
    return r;
  }

  void add(Extent e) {
    long start = e.start();
    long end = e.start() + e.length();
    Map.Entry<Long, Long> before = runs.floorEntry(start);
    if (before != null && before.getKey() + before.getValue() >= start) {
      start = before.getKey();
      end = Math.max(end, before.getKey() + before.getValue());
      runs.remove(before.getKey());
    }
    Map.Entry<Long, Long> next = runs.ceilingEntry(start);
    while (next != null && next.getKey() <= end) {
      end = Math.max(end, next.getKey() + next.getValue());
      runs.remove(next.getKey());
      next = runs.ceilingEntry(start);
    }
    runs.put(start, end - start);
  }

  void remove(Extent e) {
    long start = e.start();
    long end = e.start() + e.length();
    Map.Entry<Long, Long> before = runs.lowerEntry(start);
    if (before != null && before.getKey() + before.getValue() > start) {
      long beforeEnd = before.getKey() + before.getValue();
      runs.put(before.getKey(), start - before.getKey());
      if (beforeEnd > end) {
        runs.put(end, beforeEnd - end);
        return;
      }
    }
    Map.Entry<Long, Long> in = runs.ceilingEntry(start);
    while (in != null && in.getKey() < end) {
      long inEnd = in.getKey() + in.getValue();
      runs.remove(in.getKey());
      if (inEnd > end) {
        runs.put(end, inEnd - end);
      }
      in = runs.ceilingEntry(start);
    }
  }

  /** Whether any block of {@code e} is in the set. */
  boolean overlaps(Extent e) {
    Map.Entry<Long, Long> before = runs.floorEntry(e.start());
    if (before != null && before.getKey() + before.getValue() > e.start()) {
      return true;
    }
    Long next = runs.higherKey(e.start());
    return next != null && next < e.start() + e.length();
  }

  boolean isEmpty() {
    return runs.isEmpty();
  }

  long blocks() {
    return runs.values().stream().mapToLong(Long::longValue).sum();
  }

  List<Extent> extents() {
    List<Extent> out = new ArrayList<>(runs.size());
    runs.forEach((s, l) -> out.add(new Extent(s, l)));
    return out;
  }

  @Override
  public String toString() {
    return runs.toString();
  }
}

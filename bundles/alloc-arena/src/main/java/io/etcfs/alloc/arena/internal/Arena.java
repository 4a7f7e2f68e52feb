package io.etcfs.alloc.arena.internal;

import io.etcfs.spi.alloc.Extent;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;

/**
 * One arena as this node sees it. Every arena mirrors its reverse map ({@code refs}, fed by the
 * watch on {@code blocks/}) for the statfs count; an arena this node owns also keeps the free
 * and reserved runs. Invariant while owned: free, reserved, landing and the union of refs are
 * disjoint, and free only ever grows through {@link #freeIfUnused}, which subtracts the others.
 * Guarded by the {@link ArenaTable}'s lock.
 */
final class Arena {
  final int index;
  final long start;
  final long end;
  private final TreeMap<Long, Ref> refs = new TreeMap<>();
  private final RunSet free = new RunSet();
  private final RunSet reserved = new RunSet();
  /** Committed blocks whose reverse-map event has not arrived yet: neither free nor reserved. */
  private final RunSet landing = new RunSet();
  private long referenced;
  private boolean owned;
  private long claimRevision;
  private long syncedRevision;
  private long cursor;
  long lastActivity;

  Arena(int index, long start, long end) {
    this.index = index;
    this.start = start;
    this.end = end;
    this.cursor = start;
  }

  boolean owned() {
    return owned;
  }

  long claimRevision() {
    return claimRevision;
  }

  long referenced() {
    return referenced;
  }

  long reserved() {
    return reserved.size();
  }

  /** Blocks in use that the reverse-map mirror does not show yet. */
  long landing() {
    return landing.size();
  }

  long free() {
    return free.size();
  }

  /**
   * The longest run of free blocks: exact in an arena this node owns (its free set also
   * excludes reservations); elsewhere the longest gap between the extents the mirror shows.
   */
  long longestFreeRun() {
    if (owned) {
      return free.longest();
    }
    long best = 0;
    long at = start;
    for (Map.Entry<Long, Ref> e : refs.entrySet()) {
      best = Math.max(best, e.getKey() - at);
      at = Math.max(at, e.getKey() + e.getValue().length());
    }
    return Math.max(best, end - at);
  }

  long cursor() {
    return cursor;
  }

  boolean isFree(long block) {
    return free.containsAll(block, block + 1);
  }

  boolean isReserved(long s, long e) {
    return reserved.containsAll(s, e);
  }

  NavigableMap<Long, Ref> refs() {
    return refs;
  }

  /** Takes ownership from a fresh read of the reverse map at {@code revision}. */
  void own(long claimRev, Map<Long, Ref> snapshot, long revision) {
    owned = true;
    claimRevision = claimRev;
    replaceRefs(snapshot);
    free.clear();
    free.add(start, end);
    refs.forEach((s, r) -> free.remove(s, s + r.length()));
    reserved.runs().forEach(r -> free.remove(r.start(), r.end()));
    landing.clear();
    syncedRevision = revision;
  }

  void disown() {
    owned = false;
    free.clear();
  }

  void replaceRefs(Map<Long, Ref> snapshot) {
    refs.clear();
    referenced = 0;
    snapshot.forEach((s, r) -> {
      Ref clipped = new Ref(r.ino(), Math.min(r.length(), end - s));
      refs.put(s, clipped);
      referenced += clipped.length();
    });
  }

  /** Reserves up to {@code want} blocks, next-fit from {@code from}, wrapping once. */
  List<Extent> take(long want, long from, long now) {
    List<Extent> out = new ArrayList<>();
    long need = want;
    long at = from < start || from >= end ? cursor : from;
    while (need > 0) {
      RunSet.Run run = free.firstFrom(at);
      run = run != null ? run : free.firstFrom(start);
      if (run == null) {
        break;
      }
      long length = Math.min(need, run.end() - run.start());
      free.remove(run.start(), run.start() + length);
      reserved.add(run.start(), run.start() + length);
      out.add(new Extent(run.start(), length));
      need -= length;
      at = run.start() + length;
      cursor = at >= end ? start : at;
    }
    lastActivity = now;
    return out;
  }

  void abandon(long s, long e, long now) {
    for (RunSet.Run part : reserved.intersect(s, e)) {
      reserved.remove(part.start(), part.end());
      freeIfUnused(part.start(), part.end());
    }
    lastActivity = now;
  }

  /**
   * A reserved piece was committed. It stays out of the free runs: the watch event of the same
   * commit records it in the reverse map, before or after this.
   */
  void committed(long s, long e, long now) {
    reserved.remove(s, e);
    landing.add(s, e);
    Map.Entry<Long, Ref> lower = refs.floorEntry(s);
    long from = lower != null ? lower.getKey() : s;
    refs.subMap(from, true, e, false).forEach((k, r) -> landing.remove(k, k + r.length()));
    lastActivity = now;
  }

  /** True if a block of [s, e) is recorded in the mirror or committed and not shown yet. */
  boolean held(long s, long e) {
    return recorded(s, e) || !landing.intersect(s, e).isEmpty();
  }

  /** True if a recorded extent still covers a block of [s, e). */
  boolean recorded(long s, long e) {
    Map.Entry<Long, Ref> lower = refs.floorEntry(s);
    if (lower != null && lower.getKey() + lower.getValue().length() > s) {
      return true;
    }
    return !refs.subMap(s, true, e, false).isEmpty();
  }

  /**
   * A watch event. Events arrive in revision order; besides them only a rebuild from a fresh read
   * at revision R ({@link #own}) changes {@code refs}, which makes the events up to R redundant.
   * They are skipped even after the arena was let go: applied late, they would briefly bring back
   * extents the read had already seen deleted.
   */
  void applyEvent(RefChange change, long revision, long now) {
    if (revision <= syncedRevision) {
      return;
    }
    apply(change);
    lastActivity = now;
  }

  private void apply(RefChange change) {
    long s = change.start();
    if (change.ref() == null) {
      Ref old = refs.remove(s);
      if (old != null) {
        referenced -= old.length();
        freeIfUnused(s, s + old.length());
      }
      return;
    }
    Ref ref = new Ref(change.ref().ino(), Math.min(change.ref().length(), end - s));
    Ref old = refs.put(s, ref);
    referenced += ref.length() - (old == null ? 0 : old.length());
    landing.remove(s, s + ref.length());
    if (owned) {
      free.remove(s, s + ref.length());
      if (old != null && old.length() > ref.length()) {
        freeIfUnused(s + ref.length(), s + old.length());
      }
    }
  }

  private void freeIfUnused(long s, long e) {
    if (!owned) {
      return;
    }
    RunSet candidate = new RunSet();
    candidate.add(s, e);
    Map.Entry<Long, Ref> lower = refs.floorEntry(s);
    long from = lower != null ? lower.getKey() : s;
    refs.subMap(from, true, e, false).forEach((k, r) -> candidate.remove(k, k + r.length()));
    reserved.intersect(s, e).forEach(r -> candidate.remove(r.start(), r.end()));
    landing.intersect(s, e).forEach(r -> candidate.remove(r.start(), r.end()));
    candidate.runs().forEach(r -> free.add(r.start(), r.end()));
  }
}

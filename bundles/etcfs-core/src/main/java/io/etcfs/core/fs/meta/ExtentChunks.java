package io.etcfs.core.fs.meta;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;

/**
 * A file's extent map as it is stored: chunks of at most {@link Codec#EXTENTS_PER_CHUNK} extents,
 * each under the key of its first extent's file block, so a change rewrites only the few chunk
 * keys around it and no transaction passes etcd's size limits however large the file. Immutable.
 */
public final class ExtentChunks {
  /** A chunk this small is merged with its neighbour, so deletes do not leave dust keys. */
  static final int MERGE_BELOW = Codec.EXTENTS_PER_CHUNK / 4;

  private final NavigableMap<Long, List<FileExtent>> chunks;
  private final List<FileExtent> all;

  public ExtentChunks(Map<Long, List<FileExtent>> chunks) {
    this.chunks = Collections.unmodifiableNavigableMap(new TreeMap<>(chunks));
    List<FileExtent> flat = new ArrayList<>();
    this.chunks.values().forEach(flat::addAll);
    this.all = List.copyOf(flat);
  }

  public static ExtentChunks empty() {
    return new ExtentChunks(Map.of());
  }

  /** Every extent, sorted. */
  public List<FileExtent> extents() {
    return all;
  }

  public NavigableMap<Long, List<FileExtent>> chunks() {
    return chunks;
  }

  /**
   * The result of one change: the chunk keys to put and to delete (disjoint), the extents that
   * were unmapped, and the map afterwards.
   */
  public record Change(
      Map<Long, List<FileExtent>> puts, Set<Long> deletes, List<FileExtent> removed,
      ExtentChunks after) {}

  /** Unmaps file blocks [from, to) and maps {@code added} (all inside that range). */
  public Change replace(long from, long to, List<FileExtent> added) {
    return rewrite(from, to, (list, removed) ->
        ExtentMap.overwrite(ExtentMap.punch(list, from, to, removed), added, removed));
  }

  /** Maps {@code added} (sorted, not overlapping each other), replacing only what they cover. */
  public Change overwrite(List<FileExtent> added) {
    if (added.isEmpty()) {
      return new Change(Map.of(), Set.of(), List.of(), this);
    }
    long from = added.get(0).fileBlock();
    long to = added.get(added.size() - 1).fileEnd();
    return rewrite(from, to, (list, removed) -> ExtentMap.overwrite(list, added, removed));
  }

  private interface Edit {
    List<FileExtent> apply(List<FileExtent> list, List<FileExtent> removed);
  }

  private Change rewrite(long from, long to, Edit edit) {
    List<Long> affected = affected(from, to);
    List<FileExtent> collected = new ArrayList<>();
    affected.forEach(k -> collected.addAll(chunks.get(k)));
    List<FileExtent> removed = new ArrayList<>();
    List<FileExtent> merged = mergeNeighbour(affected, edit.apply(collected, removed));
    Map<Long, List<FileExtent>> puts = split(merged);
    Set<Long> deletes = new HashSet<>(affected);
    deletes.removeAll(puts.keySet());
    TreeMap<Long, List<FileExtent>> next = new TreeMap<>(chunks);
    affected.forEach(next::remove);
    next.putAll(puts);
    return new Change(puts, deletes, removed, new ExtentChunks(next));
  }

  /**
   * Where a bounded step of a truncation to {@code cut} starts: at most about {@code maxExtents}
   * extents lie at or after it (a whole chunk at least), and never before {@code cut}.
   */
  public long tailStep(long cut, int maxExtents) {
    int count = 0;
    for (Map.Entry<Long, List<FileExtent>> e : chunks.descendingMap().entrySet()) {
      count += e.getValue().size();
      if (e.getKey() <= cut) {
        return cut;
      }
      if (count >= maxExtents) {
        return e.getKey();
      }
    }
    return cut;
  }

  /** Chunk keys whose blocks intersect [from, to), in order. */
  private List<Long> affected(long from, long to) {
    if (chunks.isEmpty()) {
      return new ArrayList<>();
    }
    Long first = chunks.floorKey(from);
    first = first == null ? chunks.firstKey() : first;
    Long last = chunks.floorKey(to - 1);
    if (last == null || last < first) {
      return new ArrayList<>(List.of(first));
    }
    return new ArrayList<>(chunks.subMap(first, true, last, true).keySet());
  }

  private List<FileExtent> mergeNeighbour(List<Long> affected, List<FileExtent> merged) {
    if (affected.isEmpty() || merged.isEmpty() || merged.size() >= MERGE_BELOW) {
      return merged;
    }
    Long next = chunks.higherKey(affected.get(affected.size() - 1));
    Long prev = chunks.lowerKey(affected.get(0));
    Long pick = next != null ? next : prev;
    if (pick == null || chunks.get(pick).size() + merged.size() > Codec.EXTENTS_PER_CHUNK) {
      return merged;
    }
    List<FileExtent> joined = new ArrayList<>(merged);
    joined.addAll(chunks.get(pick));
    joined.sort(java.util.Comparator.comparingLong(FileExtent::fileBlock));
    affected.add(pick);
    return ExtentMap.coalesce(joined);
  }

  private static Map<Long, List<FileExtent>> split(List<FileExtent> list) {
    Map<Long, List<FileExtent>> out = new TreeMap<>();
    int per = Codec.EXTENTS_PER_CHUNK;
    int pieces = (list.size() + per - 1) / per;
    for (int p = 0; p < pieces; p++) {
      int from = (int) ((long) list.size() * p / pieces);
      int to = (int) ((long) list.size() * (p + 1) / pieces);
      List<FileExtent> piece = List.copyOf(list.subList(from, to));
      out.put(piece.get(0).fileBlock(), piece);
    }
    return out;
  }
}

package io.etcfs.core.fs.meta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import org.junit.jupiter.api.Timeout;

/**
 * The chunked extent map against a model: an array from file block to device block. Writes map
 * fresh device blocks over ranges, truncations cut the tail; after every step the map is sorted,
 * non-overlapping and coalesced, every chunk holds 1..64 extents under its first block's key,
 * the removed extents are exactly what the model lost, and the stored keys (puts and deletes
 * applied to a key map) always decode to the same map.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ExtentChunksTest {
  static final int FILE = 3000;

  @Provide
  Arbitrary<List<Tuple.Tuple3<Integer, Integer, Integer>>> ops() {
    Arbitrary<Tuple.Tuple3<Integer, Integer, Integer>> op = Arbitraries.integers().between(0, 9)
        .flatMap(kind -> Arbitraries.integers().between(0, FILE - 1).flatMap(start ->
            Arbitraries.integers().between(1, 40).map(len -> Tuple.of(kind, start, len))));
    return op.list().ofMinSize(1).ofMaxSize(250);
  }

  @Property(tries = 200)
  void agreesWithAModel(@ForAll("ops") List<Tuple.Tuple3<Integer, Integer, Integer>> ops) {
    long[] model = new long[FILE + 64];
    Arrays.fill(model, -1);
    ExtentChunks map = ExtentChunks.empty();
    Map<Long, List<FileExtent>> stored = new TreeMap<>();
    long nextDevice = 1_000_000;
    for (var op : ops) {
      int start = op.get2();
      int len = Math.min(op.get3(), FILE - start);
      ExtentChunks.Change c;
      long[] before = model.clone();
      if (op.get1() == 0) {
        c = map.replace(start, Long.MAX_VALUE, List.of());
        Arrays.fill(model, start, model.length, -1);
      } else {
        List<FileExtent> added = pieces(start, len, nextDevice, op.get1() % 3 == 0);
        nextDevice += 2L * len + 7;
        c = op.get1() % 2 == 0 ? map.overwrite(added) : map.replace(start, start + len, added);
        for (FileExtent e : added) {
          for (int i = 0; i < e.length(); i++) {
            model[(int) e.fileBlock() + i] = e.deviceBlock() + i;
          }
        }
      }
      checkRemoved(before, model, c.removed());
      c.deletes().forEach(stored::remove);
      assertTrue(c.deletes().stream().noneMatch(c.puts()::containsKey));
      stored.putAll(c.puts());
      map = c.after();
      check(map, model);
      assertEquals(map.chunks(), new ExtentChunks(stored).chunks());
    }
  }

  /** One range as one or two (device-discontiguous) extents. */
  private static List<FileExtent> pieces(int start, int len, long dev, boolean split) {
    if (!split || len < 2) {
      return List.of(new FileExtent(start, dev, len));
    }
    int half = len / 2;
    return List.of(new FileExtent(start, dev, half),
        new FileExtent(start + half, dev + half + 3, len - half));
  }

  private static void checkRemoved(long[] before, long[] after, List<FileExtent> removed) {
    Map<Long, Long> lost = new HashMap<>();
    for (int b = 0; b < before.length; b++) {
      if (before[b] >= 0 && before[b] != after[b]) {
        lost.put((long) b, before[b]);
      }
    }
    Map<Long, Long> got = new HashMap<>();
    for (FileExtent e : removed) {
      for (int i = 0; i < e.length(); i++) {
        got.put(e.fileBlock() + i, e.deviceBlock() + i);
      }
    }
    assertEquals(lost, got);
  }

  private static void check(ExtentChunks map, long[] model) {
    List<FileExtent> all = map.extents();
    assertTrue(ExtentMap.wellFormed(all), all.toString());
    map.chunks().forEach((k, v) -> {
      assertTrue(v.size() >= 1 && v.size() <= Codec.EXTENTS_PER_CHUNK);
      assertEquals(k, v.get(0).fileBlock());
    });
    long[] seen = new long[model.length];
    Arrays.fill(seen, -1);
    for (FileExtent e : all) {
      for (int i = 0; i < e.length(); i++) {
        seen[(int) (e.fileBlock() + i)] = e.deviceBlock() + i;
      }
    }
    assertEquals(Arrays.toString(model), Arrays.toString(seen));
    for (int b = 0; b < model.length; b += 17) {
      int idx = ExtentMap.find(all, b);
      assertEquals(model[b] >= 0, idx >= 0);
    }
  }

  @Property(tries = 50)
  void manyExtentsSplitIntoChunksAndMergeBack(@ForAll("ops") List<Tuple.Tuple3<Integer, Integer, Integer>> ignored) {
    ExtentChunks map = ExtentChunks.empty();
    List<FileExtent> every = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      every.add(new FileExtent(i * 2L, 10_000 + i * 3L, 1));
    }
    map = map.overwrite(every).after();
    assertTrue(map.chunks().size() >= 5);
    map = map.replace(10, Long.MAX_VALUE, List.of()).after();
    assertEquals(1, map.chunks().size());
    assertEquals(5, map.extents().size());
  }
}

package io.etcfs.core.fs.plock;

import static io.etcfs.spi.vfs.PosixLock.EOF;
import static io.etcfs.spi.vfs.PosixLock.Type.READ;
import static io.etcfs.spi.vfs.PosixLock.Type.UNLOCK;
import static io.etcfs.spi.vfs.PosixLock.Type.WRITE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.spi.vfs.PosixLock;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import org.junit.jupiter.api.Test;

/** One owner's fcntl ranges: split, merge, unlock of a sub-range, the stored form. */
class OwnerRangesTest {

  private static List<Span> spans(OwnerRanges r) {
    return r.spans();
  }

  @Test
  void touchingRangesOfOneTypeMergeAndOfTwoTypesDoNot() {
    OwnerRanges r = OwnerRanges.NONE.with(READ, 0, 9, 1).with(READ, 10, 19, 1);
    assertEquals(List.of(new Span(false, 0, 19)), spans(r));
    r = r.with(WRITE, 20, 29, 1);
    assertEquals(List.of(new Span(false, 0, 19), new Span(true, 20, 29)), spans(r));
    r = r.with(READ, 5, 40, 1);
    assertEquals(List.of(new Span(false, 0, 40)), spans(r), "read over everything merges");
  }

  @Test
  void aWriteLockInsideAReadLockSplitsIt() {
    OwnerRanges r = OwnerRanges.NONE.with(READ, 0, EOF, 7).with(WRITE, 100, 199, 7);
    assertEquals(List.of(new Span(false, 0, 99), new Span(true, 100, 199),
        new Span(false, 200, EOF)), spans(r));
    r = r.with(READ, 100, 199, 7);
    assertEquals(List.of(new Span(false, 0, EOF)), spans(r), "and merges back");
  }

  @Test
  void unlockOfASubRangeLeavesBothEnds() {
    OwnerRanges r = OwnerRanges.NONE.with(WRITE, 10, 99, 1).with(UNLOCK, 40, 49, 1);
    assertEquals(List.of(new Span(true, 10, 39), new Span(true, 50, 99)), spans(r));
    r = r.with(UNLOCK, 0, 10, 1).with(UNLOCK, 99, EOF, 1);
    assertEquals(List.of(new Span(true, 11, 39), new Span(true, 50, 98)), spans(r));
    assertTrue(r.with(UNLOCK, 0, EOF, 1).isEmpty());
  }

  @Test
  void conflictsAreWithWritesOrWithReadsWhenWriting() {
    OwnerRanges r = OwnerRanges.NONE.with(READ, 0, 9, 1).with(WRITE, 20, 29, 1);
    assertNull(r.conflict(false, 0, 19), "read over read");
    assertEquals(new Span(false, 0, 9), r.conflict(true, 5, 5));
    assertEquals(new Span(true, 20, 29), r.conflict(false, 29, EOF));
    assertNull(r.conflict(true, 10, 19), "the gap");
    assertNull(r.conflict(true, 30, EOF));
  }

  @Test
  void theStoredFormRoundTripsWithThePid() {
    OwnerRanges r = OwnerRanges.NONE.with(READ, 0, 9, 42).with(WRITE, 100, EOF, 42);
    OwnerRanges back = OwnerRanges.decode(r.encode());
    assertEquals(r.spans(), back.spans());
    assertEquals(42, back.pid());
    assertEquals("pid 42\nR 0 9\nW 100 " + Long.MAX_VALUE + "\n", r.encode());
    assertThrows(IllegalStateException.class, () -> OwnerRanges.decode("Q 1 2"));
  }

  private static final int FILE = 64;

  @Provide
  Arbitrary<List<Tuple.Tuple3<Integer, Integer, Integer>>> ops() {
    Arbitrary<Tuple.Tuple3<Integer, Integer, Integer>> op = Arbitraries.integers().between(0, 2)
        .flatMap(type -> Arbitraries.integers().between(0, FILE - 1).flatMap(start ->
            Arbitraries.integers().between(0, FILE - start).map(len ->
                Tuple.of(type, start, len))));
    return op.list().ofMaxSize(40);
  }

  /**
   * After any sequence of sets and unsets, the spans are exactly the bitmap model's runs: one
   * byte one state, maximal runs, nothing else (length 0 means to the end of the file).
   */
  @Property(tries = 500)
  void rangesEqualABitmapModel(@ForAll("ops") List<Tuple.Tuple3<Integer, Integer, Integer>> ops) {
    char[] model = new char[FILE + 1]; // the last cell stands for everything past the file
    java.util.Arrays.fill(model, '.');
    OwnerRanges r = OwnerRanges.NONE;
    for (Tuple.Tuple3<Integer, Integer, Integer> op : ops) {
      PosixLock.Type type = PosixLock.Type.values()[op.get1()];
      int start = op.get2();
      long end = op.get3() == 0 ? EOF : start + op.get3() - 1;
      r = r.with(type, start, end, 1);
      char c = type == WRITE ? 'W' : type == READ ? 'R' : '.';
      int last = end == EOF ? FILE : (int) end;
      for (int i = start; i <= last; i++) {
        model[i] = c;
      }
    }
    assertEquals(runs(model), spans(r));
  }

  private static List<Span> runs(char[] model) {
    List<Span> out = new ArrayList<>();
    int i = 0;
    while (i < model.length) {
      int j = i;
      while (j + 1 < model.length && model[j + 1] == model[i]) {
        j++;
      }
      if (model[i] != '.') {
        out.add(new Span(model[i] == 'W', i, j == FILE ? EOF : j));
      }
      i = j + 1;
    }
    return out;
  }
}

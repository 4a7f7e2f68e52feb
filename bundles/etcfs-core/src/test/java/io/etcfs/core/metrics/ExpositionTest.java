package io.etcfs.core.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The hand-written writer of Prometheus' text format. */
@Timeout(10)
class ExpositionTest {
  @Test
  void familiesAreGroupedWithOneHelpAndTypeWhoeverWroteThem() {
    Exposition e = new Exposition();
    e.counter("etcfs_x_total", "Xs done", 3, "kind", "a");
    e.gauge("etcfs_g", "A gauge", 1.5);
    e.counter("etcfs_x_total", "", 4, "kind", "b");
    assertEquals("""
        # HELP etcfs_x_total Xs done
        # TYPE etcfs_x_total counter
        etcfs_x_total{kind="a"} 3
        etcfs_x_total{kind="b"} 4
        # HELP etcfs_g A gauge
        # TYPE etcfs_g gauge
        etcfs_g 1.5
        """, e.text());
  }

  @Test
  void histogramsHaveCumulativeBucketsInfSumAndCount() {
    Exposition e = new Exposition();
    e.histogram("etcfs_t_seconds", "Times", new double[] {0.000064, 0.5}, new long[] {1, 2}, 3,
        0.25, "op", "read");
    assertEquals("""
        # HELP etcfs_t_seconds Times
        # TYPE etcfs_t_seconds histogram
        etcfs_t_seconds_bucket{op="read",le="0.000064"} 1
        etcfs_t_seconds_bucket{op="read",le="0.5"} 2
        etcfs_t_seconds_bucket{op="read",le="+Inf"} 3
        etcfs_t_seconds_sum{op="read"} 0.25
        etcfs_t_seconds_count{op="read"} 3
        """, e.text());
  }

  @Test
  void labelValuesAndHelpAreEscaped() {
    Exposition e = new Exposition();
    e.gauge("etcfs_i", "a \\ b\nc", 1, "path", "a\"b\\c\nd");
    assertEquals("""
        # HELP etcfs_i a \\\\ b\\nc
        # TYPE etcfs_i gauge
        etcfs_i{path="a\\"b\\\\c\\nd"} 1
        """, e.text());
  }

  @Test
  void malformedMetricsAreRefused() {
    Exposition e = new Exposition();
    assertThrows(IllegalArgumentException.class, () -> e.counter("etcfs_x", "no _total", 1));
    assertThrows(IllegalArgumentException.class, () -> e.gauge("etcfs-x", "bad name", 1));
    assertThrows(IllegalArgumentException.class, () -> e.gauge("etcfs_x", "odd", 1, "a"));
    assertThrows(IllegalArgumentException.class, () -> e.gauge("etcfs_x", "le", 1, "le", "1"));
    e.gauge("etcfs_y", "a gauge", 1);
    assertThrows(IllegalArgumentException.class, () -> e.counter("etcfs_y", "now a counter", 1));
  }

  @Test
  void numbersAreIntegersWhenWholeAndSpecialValuesSpelledAsPrometheusDoes() {
    assertEquals("42", Exposition.number(42));
    assertEquals("0.5", Exposition.number(0.5));
    assertEquals("NaN", Exposition.number(Double.NaN));
    assertEquals("+Inf", Exposition.number(Double.POSITIVE_INFINITY));
  }
}

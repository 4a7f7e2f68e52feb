package io.etcfs.support.metrics;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.etcfs.spi.metrics.Metrics;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class LatencyHistogramTest {
  @Test
  void observationsLandInTheFirstBucketThatHoldsThemAndAccumulate() {
    LatencyHistogram h = new LatencyHistogram();
    h.record(10_000); // 10 µs
    h.record(64_000); // 64 µs: on the first edge
    h.record(65_000); // 65 µs: the second bucket
    h.record(3_000_000_000L); // 3 s
    h.record(100_000_000_000L); // 100 s: beyond the last edge
    long[][] cumulative = new long[1][];
    long[] count = new long[1];
    double[] sum = new double[1];
    double[][] bounds = new double[1][];
    h.writeTo(new Metrics() {
      @Override
      public void counter(String name, String help, double value, String... labels) {}

      @Override
      public void gauge(String name, String help, double value, String... labels) {}

      @Override
      public void histogram(String name, String help, double[] upperBounds, long[] c, long n,
          double s, String... labels) {
        bounds[0] = upperBounds;
        cumulative[0] = c;
        count[0] = n;
        sum[0] = s;
        assertArrayEquals(new String[] {"kind", "x"}, labels);
      }
    }, "etcfs_t_seconds", "t", "kind", "x");
    assertEquals(5, count[0]);
    assertEquals(5, h.count());
    assertEquals(0.000064, bounds[0][0], 1e-12);
    assertEquals(33.554432, bounds[0][bounds[0].length - 1], 1e-9);
    assertEquals(2, cumulative[0][0]);
    assertEquals(3, cumulative[0][1]);
    assertEquals(4, cumulative[0][cumulative[0].length - 1]); // 100 s only in +Inf
    assertEquals(103.000139, sum[0], 1e-6);
  }

  @Test
  void metricsAddressesAreHostAndPort() {
    assertEquals(new InetSocketAddress("127.0.0.1", 9567), MetricsAddress.parse("127.0.0.1:9567"));
    assertEquals(new InetSocketAddress("::1", 9567), MetricsAddress.parse("[::1]:9567"));
    for (String bad : new String[] {"9567", ":9567", "host:", "host:x", "host:0", "host:70000"}) {
      assertThrows(IllegalArgumentException.class, () -> MetricsAddress.parse(bad), bad);
    }
  }
}

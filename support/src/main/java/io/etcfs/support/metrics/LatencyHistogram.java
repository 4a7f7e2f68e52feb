package io.etcfs.support.metrics;

import io.etcfs.spi.metrics.Metrics;
import java.util.concurrent.atomic.LongAdder;

/**
 * Durations in fixed buckets whose edges double from 64 µs to 33.6 s, counted with one
 * {@link LongAdder} per bucket: no lock and no allocation per observation.
 */
public final class LatencyHistogram {
  private static final int FIRST_SHIFT = 6; // 2^6 µs = 64 µs
  private static final int EDGES = 20; // up to 2^25 µs = 33.6 s
  private static final double[] BOUNDS = bounds();

  private final LongAdder[] buckets = new LongAdder[EDGES + 1];
  private final LongAdder nanos = new LongAdder();

  public LatencyHistogram() {
    for (int i = 0; i < buckets.length; i++) {
      buckets[i] = new LongAdder();
    }
  }

  /** One observation of {@code elapsedNanos}. */
  public void record(long elapsedNanos) {
    long micros = Math.max(0, elapsedNanos) / 1000;
    // bucket i holds (2^(FIRST_SHIFT+i-1), 2^(FIRST_SHIFT+i)] µs; the last, everything larger
    int bits = micros <= 1 ? 0 : 64 - Long.numberOfLeadingZeros(micros - 1);
    buckets[Math.min(EDGES, Math.max(0, bits - FIRST_SHIFT))].increment();
    nanos.add(Math.max(0, elapsedNanos));
  }

  /** Observations so far. */
  public long count() {
    long n = 0;
    for (LongAdder b : buckets) {
      n += b.sum();
    }
    return n;
  }

  /** Writes this histogram as {@code name} with {@code labels}. */
  public void writeTo(Metrics out, String name, String help, String... labels) {
    long[] cumulative = new long[EDGES];
    long seen = 0;
    for (int i = 0; i < EDGES; i++) {
      seen += buckets[i].sum();
      cumulative[i] = seen;
    }
    seen += buckets[EDGES].sum();
    out.histogram(name, help, BOUNDS, cumulative, seen, nanos.sum() / 1e9, labels);
  }

  private static double[] bounds() {
    double[] b = new double[EDGES];
    for (int i = 0; i < EDGES; i++) {
      b[i] = (1L << (FIRST_SHIFT + i)) / 1e6;
    }
    return b;
  }
}

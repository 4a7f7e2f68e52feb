package io.etcfs.spi.metrics;

import org.osgi.annotation.versioning.ProviderType;

/**
 * Where a {@link MetricSource} writes its values. Names follow Prometheus' conventions: an
 * {@code etcfs_} prefix, the unit in the name ({@code _seconds}, {@code _bytes}) and
 * {@code _total} on counters. Labels are given as name, value, name, value...; one name may be
 * written many times with different labels (also by different sources), always as one type; the
 * first non-empty help text is the family's, so later writes may pass an empty one.
 */
@ProviderType
public interface Metrics {
  /** A value that only grows while the node runs (its name ends with {@code _total}). */
  void counter(String name, String help, double value, String... labels);

  /** A value that goes up and down. */
  void gauge(String name, String help, double value, String... labels);

  /**
   * A distribution: {@code cumulative[i]} observations were at most {@code upperBounds[i]}
   * (ascending; the last bucket, +Inf, is {@code count}), and they add up to {@code sum}.
   */
  void histogram(String name, String help, double[] upperBounds, long[] cumulative, long count,
      double sum, String... labels);
}

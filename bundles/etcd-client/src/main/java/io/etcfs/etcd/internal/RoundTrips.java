package io.etcfs.etcd.internal;

import io.etcfs.spi.metrics.MetricSource;
import io.etcfs.spi.metrics.Metrics;
import io.etcfs.support.metrics.LatencyHistogram;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

/**
 * Every request this node's one etcd client makes for any bundle (the engine, lock sessions,
 * membership, allocators), by kind: how many, how long each took to its answer, how many failed.
 * Watches are streams, not round trips, and are counted only as started.
 */
final class RoundTrips implements MetricSource {
  static final String GET = "get";
  static final String RANGE = "range";
  static final String TXN = "txn";
  static final String LEASE_GRANT = "lease_grant";
  static final String LEASE_KEEPALIVE = "lease_keepalive";
  static final String LEASE_TTL = "lease_ttl";
  static final String LEASE_REVOKE = "lease_revoke";

  private record Kind(LatencyHistogram time, LongAdder failures) {}

  private final Map<String, Kind> kinds = Map.of(GET, kind(), RANGE, kind(), TXN, kind(),
      LEASE_GRANT, kind(), LEASE_KEEPALIVE, kind(), LEASE_TTL, kind(), LEASE_REVOKE, kind());
  private final LongAdder watches = new LongAdder();

  private static Kind kind() {
    return new Kind(new LatencyHistogram(), new LongAdder());
  }

  /** Runs one request of {@code kind}, timed and counted. */
  <T> T time(String kind, Supplier<T> request) {
    Kind k = kinds.get(kind);
    long start = System.nanoTime();
    boolean failed = true;
    try {
      T result = request.get();
      failed = false;
      return result;
    } finally {
      k.time().record(System.nanoTime() - start);
      if (failed) {
        k.failures().increment();
      }
    }
  }

  void watchStarted() {
    watches.increment();
  }

  @Override
  public void collect(Metrics out) {
    new java.util.TreeMap<>(kinds).forEach((name, k) -> {
      k.time().writeTo(out, "etcfs_etcd_request_duration_seconds", "Requests of this node's"
          + " etcd client (every bundle's), by kind: time to etcd's answer or the failure",
          "kind", name);
      out.counter("etcfs_etcd_request_failures_total", "Requests of this node's etcd client"
          + " that failed (unreachable, timed out, refused), by kind", k.failures().sum(),
          "kind", name);
    });
    out.counter("etcfs_etcd_watches_started_total", "Watch streams this node's etcd client"
        + " opened (a watch restarted after a failure counts again)", watches.sum());
  }
}

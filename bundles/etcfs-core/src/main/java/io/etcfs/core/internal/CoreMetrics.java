package io.etcfs.core.internal;

import io.etcfs.core.fs.EtcFs;
import io.etcfs.core.fs.Stats;
import io.etcfs.spi.alloc.Allocator;
import io.etcfs.spi.lock.LockService;
import io.etcfs.spi.metrics.MetricSource;
import io.etcfs.spi.metrics.Metrics;
import io.etcfs.spi.vfs.Errno;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The filesystem engine's counters ({@link Stats}, the same ones the shell's {@code stats}
 * shows) as metrics: front-end calls by operation, their errors by errno, the engine's etcd
 * requests, device bytes, the metadata cache, lock waits and recalls, and which backends are in
 * use. Read at each scrape; nothing here runs on a call's path.
 */
final class CoreMetrics implements MetricSource {
  /**
   * The histogram edges exported, as indexes into {@link Stats.Op#buckets()}: edge i is 2^(i+1)
   * µs, from 8 µs to 2^25 µs (33.5 s). Finer and coarser buckets of the engine's 40 fold into
   * their neighbours (cumulative counts lose nothing at these edges).
   */
  private static final int FIRST_EDGE = 2;
  private static final int LAST_EDGE = 24;
  private static final Map<Integer, String> ERRNO_NAMES = errnoNames();

  private final EtcFs fs;
  private final String fsName;
  private final String nodeName;
  private final Supplier<LockService> lock;
  private final Supplier<Allocator> allocator;

  CoreMetrics(EtcFs fs, String fsName, String nodeName, Supplier<LockService> lock,
      Supplier<Allocator> allocator) {
    this.fs = fs;
    this.fsName = fsName;
    this.nodeName = nodeName;
    this.lock = lock;
    this.allocator = allocator;
  }

  @Override
  public void collect(Metrics out) {
    LockService l = lock.get();
    Allocator a = allocator.get();
    out.gauge("etcfs_node_info", "This node: its filesystem, name, and the lock backend and"
        + " allocator bound now (none while a switch has none bound)", 1, "fs", fsName, "node",
        nodeName, "lock_backend", l == null ? "none" : l.backend(), "allocator",
        a == null ? "none" : a.backend());
    Stats s = fs.stats();
    s.ops().forEach((op, o) -> {
      histogram(out, "etcfs_fuse_op_duration_seconds", "Front-end (FUSE) calls by operation:"
          + " time from entering the filesystem to its answer", o, "op", op);
      o.errnos().forEach((errno, n) -> out.counter("etcfs_fuse_op_errors_total",
          "Front-end calls that failed, by operation and errno", n, "op", op, "errno",
          errnoName(errno)));
    });
    out.counter("etcfs_etcd_engine_requests_total", "The filesystem engine's requests to"
        + " etcd, by kind (reads include transactions that only read)", s.storeGets(),
        "kind", "get");
    out.counter("etcfs_etcd_engine_requests_total", "", s.storeRanges(), "kind", "range");
    out.counter("etcfs_etcd_engine_requests_total", "", s.storeCommits(), "kind", "commit");
    histogram(out, "etcfs_etcd_engine_commit_duration_seconds", "The filesystem engine's"
        + " metadata commits, from the call to etcd's answer", s.storeCommitTime());
    out.counter("etcfs_device_read_bytes_total", "Bytes read from the shared device by the"
        + " filesystem engine", s.deviceReadBytes());
    out.counter("etcfs_device_written_bytes_total", "Bytes written to the shared device by the"
        + " filesystem engine", s.deviceWriteBytes());
    EtcFs.CacheCounts c = fs.cacheCounts();
    out.counter("etcfs_metadata_cache_lookups_total", "Key look-ups of the metadata cache, by"
        + " result (a miss reads etcd)", c.hits(), "result", "hit");
    out.counter("etcfs_metadata_cache_lookups_total", "", c.misses(), "result", "miss");
    histogram(out, "etcfs_lock_wait_seconds", "This node's asks for an inode lock: time waited"
        + " in the lock backend, granted or not", s.lockWaits());
    out.counter("etcfs_lock_wait_failures_total", "Asks for an inode lock that ended without"
        + " a grant (timed out, or the backend went away)", s.lockWaits().errors());
    histogram(out, "etcfs_lock_recall_handover_seconds", "Recalls of this node's inode locks"
        + " by other nodes: time from the backend's ask to the lock let go (flush, commit,"
        + " release)", s.recallHandovers());
    out.counter("etcfs_lock_downgrades_total", "Clean exclusive locks of this node made shared"
        + " in place", s.downgrades());
  }

  private static void histogram(Metrics out, String name, String help, Stats.Op op,
      String... labels) {
    long[] b = op.buckets();
    int edges = LAST_EDGE - FIRST_EDGE + 1;
    double[] bounds = new double[edges];
    long[] cumulative = new long[edges];
    long seen = 0;
    int edge = 0;
    for (int i = 0; i < b.length; i++) {
      seen += b[i];
      if (i >= FIRST_EDGE && i <= LAST_EDGE) {
        bounds[edge] = (1L << (i + 1)) / 1e6;
        cumulative[edge++] = seen;
      }
    }
    out.histogram(name, help, bounds, cumulative, seen, op.nanos() / 1e9, labels);
  }

  static String errnoName(int errno) {
    return errno == 0 ? "unknown" : ERRNO_NAMES.getOrDefault(errno, Integer.toString(errno));
  }

  private static Map<Integer, String> errnoNames() {
    Map<Integer, String> names = new HashMap<>();
    for (Field f : Errno.class.getFields()) {
      if (Modifier.isStatic(f.getModifiers()) && f.getType() == int.class) {
        try {
          names.putIfAbsent(f.getInt(null), f.getName());
        } catch (IllegalAccessException e) {
          throw new IllegalStateException(e);
        }
      }
    }
    return Map.copyOf(names);
  }
}

package io.etcfs.launcher.cli;

import java.time.LocalTime;
import java.util.Map;

/** The table {@code etcfs top} prints: one row per node, rates over the last interval. */
final class TopTable {
  private static final String HEADER = String.format(
      "%-12s %8s %7s %8s %9s %9s %7s %8s %7s %6s %6s  %s%n", "NODE", "OPS/S", "ERR/S",
      "OP_MS", "READ_MB/S", "WRIT_MB/S", "ETCD/S", "ETCD_MS", "LOCKW/S", "RECL/S", "LEASE",
      "LOCK/ALLOC");

  private TopTable() {}

  static String render(String fs, Map<String, String> nodes, Map<String, Scrape> before,
      Map<String, Scrape> after, double seconds, LocalTime at) {
    StringBuilder b = new StringBuilder();
    b.append(String.format("etcfs top - %s - filesystem %s, %d member(s), rates over %.1f s%n%n",
        at, fs, nodes.size(), seconds));
    b.append(HEADER);
    nodes.forEach((node, address) -> {
      Scrape now = after.get(node);
      Scrape then = before.get(node);
      if (address.isEmpty()) {
        b.append(String.format("%-12s %s%n", node, "(no metrics: started without --metrics)"));
      } else if (now == null || then == null) {
        b.append(String.format("%-12s %s%n", node, "(metrics at " + address
            + " did not answer)"));
      } else {
        b.append(row(node, then, now, seconds));
      }
    });
    return b.toString();
  }

  private static String row(String node, Scrape a, Scrape b, double s) {
    double ops = delta(a, b, "etcfs_fuse_op_duration_seconds_count");
    double opTime = delta(a, b, "etcfs_fuse_op_duration_seconds_sum");
    double etcd = delta(a, b, "etcfs_etcd_request_duration_seconds_count");
    double etcdTime = delta(a, b, "etcfs_etcd_request_duration_seconds_sum");
    return String.format("%-12s %8.1f %7.1f %8s %9.2f %9.2f %7.1f %8s %7.1f %6.1f %6s  %s%n",
        node, ops / s, delta(a, b, "etcfs_fuse_op_errors_total") / s, mean(opTime, ops),
        delta(a, b, "etcfs_device_read_bytes_total") / s / 1e6,
        delta(a, b, "etcfs_device_written_bytes_total") / s / 1e6, etcd / s,
        mean(etcdTime, etcd), delta(a, b, "etcfs_lock_wait_seconds_count") / s,
        delta(a, b, "etcfs_lock_recall_handover_seconds_count") / s,
        b.has("etcfs_membership_lease_remaining_seconds") ? String.format("%.1fs",
            b.sum("etcfs_membership_lease_remaining_seconds")) : "-",
        b.label("etcfs_node_info", "lock_backend", "?") + "/"
            + b.label("etcfs_node_info", "allocator", "?"));
  }

  /** A counter's growth; a restarted node (counter went down) counts from zero. */
  private static double delta(Scrape a, Scrape b, String name) {
    double d = b.sum(name) - a.sum(name);
    return d < 0 ? b.sum(name) : d;
  }

  private static String mean(double seconds, double n) {
    return n == 0 ? "-" : String.format("%.2f", seconds / n * 1000);
  }
}

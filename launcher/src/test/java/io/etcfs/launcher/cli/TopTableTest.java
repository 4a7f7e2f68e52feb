package io.etcfs.launcher.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.LocalTime;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** etcfs top's parsing of a scrape and its rates from two. */
@Timeout(10)
class TopTableTest {
  private static Scrape scrape(long ops, long written, double lease) {
    return Scrape.parse("""
        # HELP etcfs_node_info This node
        # TYPE etcfs_node_info gauge
        etcfs_node_info{fs="etcfs",node="node1",lock_backend="etcd",allocator="arena"} 1
        etcfs_fuse_op_duration_seconds_bucket{op="write",le="+Inf"} %d
        etcfs_fuse_op_duration_seconds_sum{op="write"} %f
        etcfs_fuse_op_duration_seconds_count{op="write"} %d
        etcfs_fuse_op_duration_seconds_count{op="read"} 0
        etcfs_device_written_bytes_total %d
        etcfs_membership_lease_remaining_seconds %s
        """.formatted(ops, ops * 0.002, ops, written, lease));
  }

  @Test
  void labelsAndValuesAreRead() {
    Scrape s = Scrape.parse("a_total{x=\"q\\\"uo,te\",y=\"2\"} 3\nb 1.5e3\nc{le=\"+Inf\"} +Inf\n");
    assertEquals(3, s.sum("a_total", "x", "q\"uo,te"));
    assertEquals(0, s.sum("a_total", "x", "other"));
    assertEquals(1500, s.sum("b"));
    assertEquals(Double.POSITIVE_INFINITY, s.sum("c"));
  }

  @Test
  void ratesAreTheDifferencesOverTheInterval() {
    Map<String, String> nodes = new LinkedHashMap<>();
    nodes.put("node1", "127.0.0.1:1");
    nodes.put("node2", "");
    nodes.put("node3", "127.0.0.1:3");
    String t = TopTable.render("etcfs", nodes, Map.of("node1", scrape(100, 0, 9)),
        Map.of("node1", scrape(300, 4_000_000, 8.5)), 2.0, LocalTime.of(12, 0));
    String row = t.lines().filter(l -> l.startsWith("node1 ")).findFirst().orElseThrow();
    assertTrue(row.matches("node1 +100\\.0 +0\\.0 +2\\.00 +0\\.00 +2\\.00 .* 8\\.5s  etcd/arena"),
        row);
    assertTrue(t.contains("node2        (no metrics: started without --metrics)"), t);
    assertTrue(t.contains("node3        (metrics at 127.0.0.1:3 did not answer)"), t);
    assertTrue(t.startsWith("etcfs top - 12:00 - filesystem etcfs, 3 member(s)"), t);
  }
}

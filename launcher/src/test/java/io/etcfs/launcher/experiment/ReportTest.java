package io.etcfs.launcher.experiment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class ReportTest {
  @Test
  void theTableHasEachStrategysMedianMinimumAndMaximumAndTheRatioToTheFirst() throws Exception {
    String md = Report.of(Fixture.results(), "etcfs experiment fixture.spec",
        List.of("throughput.png", "scaling.png"));
    // run 1 and run 2 of each phase: etcd/arena 100 and 120 ops/s with one node, hazelcast 200
    // and 240; with two nodes 200/220 and 400/440
    assertTrue(md.contains("| figure | etcd/arena | hazelcast/arena | ÷ |\n|---|---:|---:|---:|\n"),
        md);
    assertTrue(md.contains("| operations/s, 1 node driving | 110 (100–120) | 220 (200–240) | 2.00 |\n"),
        md);
    assertTrue(md.contains("| operations/s, 2 nodes driving | 210 (200–220) | 420 (400–440) | 2.00 |\n"),
        md);
    // each run's median first byte: etcd (2+r, 4+r) → 3+r; hazelcast (4+r, 8+r) → 6+r
    assertTrue(md.contains("| first byte, ms (each run's median), 1 node driving | 4.50 (4.00–5.00)"
        + " | 7.50 (7.00–8.00) | 1.67 |\n"), md);
    assertTrue(md.contains("| failed operations in the phases (per run) | 0 | 3 | – |\n"), md);
    assertTrue(md.contains("| failed operations while switching to it (per run) | – | 0 | – |\n"),
        md);
    assertTrue(md.contains("| 1 | lock | etcd → hazelcast | live, switch 1 | 260 | 500 |\n"), md);
    assertTrue(md.contains("| 2 | lock | etcd → hazelcast | live, switch 2 | 270 | 500 |\n"), md);
    assertTrue(md.contains("| lock etcd → hazelcast | 2 | 260 | 265 | 270 |\n"), md);
    assertTrue(md.contains("Run of 2023-11-14, 22:13–22:18 UTC on host, Linux 6.1, 2 cores,"
        + " 8.0 GiB, Java Java 17.\n"), md);
    assertTrue(md.contains("    etcfs experiment fixture.spec\n"), md);
    assertTrue(md.contains("The machine's 1-minute load average at the end of the phases (2 cores;"
        + " the cluster and this runner included): run 1 3.0–5.0; run 2 3.0–5.0.\n"), md);
    assertTrue(md.contains("```\nworkload = handoff\n"), md);
    assertTrue(md.contains("* run 2: a note \"quoted\" over two lines\n"), md);
    assertTrue(md.contains("![throughput](throughput.png)"), md);
    assertTrue(md.contains("![scaling](scaling.png)"), md);
  }

  @Test
  void numbersKeepThreeFiguresAtMostBelowAHundred() {
    assertEquals("1234", Report.num(1234.4));
    assertEquals("123", Report.num(123.4));
    assertEquals("12.3", Report.num(12.34));
    assertEquals("1.23", Report.num(1.234));
    assertEquals("7", Report.num(7.0));
    assertEquals("110 (100–120)", Report.cell(new Stats(2, 100, 110, 120)));
    assertEquals("42", Report.cell(new Stats(1, 42, 42, 42)));
    assertEquals("–", Report.ratio(new Stats(1, 1, 1, 1), new Stats(1, 0, 0, 0)));
  }
}

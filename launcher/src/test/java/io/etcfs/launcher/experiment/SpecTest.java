package io.etcfs.launcher.experiment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(10)
class SpecTest {
  @TempDir Path tmp;

  private static String error(String text) {
    return assertThrows(SpecException.class, () -> Spec.parse(text, "s.spec")).getMessage();
  }

  @Test
  void everyKeyIsReadAndCommentsAndBlankLinesAreSkipped() throws Exception {
    Spec s = Spec.parse("""
        # the README's comparison
        workload = handoff
        strategies = etcd/arena  hazelcast/arena etcd/shared   # in this order

        nodes = 4
        active = 2 4
        runs = 5
        phase = 1500ms
        warmup = 0
        sample = 100ms
        record = 64K
        size = 2G
        """, "s.spec");
    assertEquals("handoff", s.workload());
    assertEquals(List.of(new Strategy("etcd", "arena"), new Strategy("hazelcast", "arena"),
        new Strategy("etcd", "shared")), s.strategies());
    assertEquals(4, s.nodes());
    assertEquals(List.of(2, 4), s.active());
    assertEquals(5, s.runs());
    assertEquals(Duration.ofMillis(1500), s.phase());
    assertEquals(Duration.ZERO, s.warmup());
    assertEquals(Duration.ofMillis(100), s.sample());
    assertEquals(65536, s.record());
    assertEquals(2L << 30, s.size());
  }

  @Test
  void theDefaultsDriveOneToEveryNode() throws Exception {
    Spec s = Spec.parse("workload = mixed\nstrategies = etcd/arena\n", "s.spec");
    assertEquals(3, s.nodes());
    assertEquals(List.of(1, 2, 3), s.active());
    assertEquals(3, s.runs());
    assertEquals(Duration.ofSeconds(20), s.phase());
    assertEquals(Duration.ofSeconds(5), s.warmup());
    assertEquals(Duration.ofMillis(250), s.sample());
    assertEquals(4096, s.record());
    assertEquals(4L << 30, s.size());
    assertEquals(7, s.withRuns(7).runs());
  }

  @Test
  void nodeKillDrivesTwoNodesAtLeast() throws Exception {
    Spec s = Spec.parse("workload = node-kill\nstrategies = etcd/arena\n", "s.spec");
    assertEquals(List.of(2, 3), s.active());
    assertEquals("s.spec:3: node-kill needs 2 nodes at least (one killed, one taking over)",
        error("workload = node-kill\nstrategies = etcd/arena\nnodes = 1\n"));
    assertEquals("s.spec:3: active 1 is not between 2 and nodes (3)",
        error("workload = node-kill\nstrategies = etcd/arena\nactive = 1 2\n"));
  }

  @Test
  void aMissingOrUnreadableFileIsNamed() throws Exception {
    Path missing = tmp.resolve("nope.spec");
    assertEquals("spec " + missing + ": no such file",
        assertThrows(SpecException.class, () -> Spec.read(missing)).getMessage());
    Path dir = Files.createDirectories(tmp.resolve("a-directory"));
    assertEquals(true, assertThrows(SpecException.class, () -> Spec.read(dir)).getMessage()
        .startsWith("spec " + dir + ": cannot read it"));
    Path ok = Files.writeString(tmp.resolve("ok.spec"),
        "workload = shared-creates\nstrategies = etcd/arena\n");
    assertEquals(ok.toString(), Spec.read(ok).source());
  }

  @Test
  void malformedLinesAreNamedByLine() {
    assertEquals("s.spec:2: 'strategies etcd/arena' is not 'key = value'",
        error("workload = handoff\nstrategies etcd/arena\n"));
    assertEquals("s.spec:1: '= handoff' is not 'key = value'", error("= handoff\n"));
    assertEquals("s.spec:1: unknown key 'worklaod' (keys: workload, strategies, nodes, active,"
        + " runs, phase, warmup, sample, record, size)", error("worklaod = handoff\n"));
    assertEquals("s.spec:3: runs is set twice (first on line 2)",
        error("workload = handoff\nruns = 1\nruns = 2\n"));
    assertEquals("s.spec:2: nodes has no value", error("workload = handoff\nnodes =\n"));
  }

  @Test
  void workloadAndStrategiesAreRequiredAndChecked() {
    assertEquals("s.spec: no workload (every spec names its workload)",
        error("strategies = etcd/arena\n"));
    assertEquals("s.spec: no strategies (every spec names its strategies)",
        error("workload = handoff\n"));
    assertEquals("s.spec:1: unknown workload 'writers' (handoff, shared-writers, shared-creates,"
        + " node-kill, mixed)", error("workload = writers\nstrategies = etcd/arena\n"));
    assertEquals("s.spec:2: 'etcd' is not LOCK/ALLOCATOR (for example etcd/arena)",
        error("workload = handoff\nstrategies = etcd\n"));
    assertEquals("s.spec:2: 'etcd/arena/x' is not LOCK/ALLOCATOR (for example etcd/arena)",
        error("workload = handoff\nstrategies = etcd/arena/x\n"));
    assertEquals("s.spec:2: '/arena' is not LOCK/ALLOCATOR (for example etcd/arena)",
        error("workload = handoff\nstrategies = /arena\n"));
    assertEquals("s.spec:2: etcd/arena is listed twice",
        error("workload = handoff\nstrategies = etcd/arena hazelcast/arena etcd/arena\n"));
  }

  @Test
  void numbersDurationsAndSizesAreChecked() {
    String head = "workload = handoff\nstrategies = etcd/arena\n";
    assertEquals("s.spec:3: nodes must be between 1 and 32 (got 33)", error(head + "nodes = 33\n"));
    assertEquals("s.spec:3: nodes 'three' is not a whole number", error(head + "nodes = three\n"));
    assertEquals("s.spec:3: runs must be between 1 and 1000 (got 0)", error(head + "runs = 0\n"));
    assertEquals("s.spec:4: active 4 is not between 1 and nodes (3)",
        error(head + "nodes = 3\nactive = 1 4\n"));
    assertEquals("s.spec:3: 2 is listed twice", error(head + "active = 2 2\n"));
    assertEquals("s.spec:3: active 'x' is not a whole number", error(head + "active = 1 x\n"));
    assertEquals("s.spec:3: phase 'soon' is not a duration (examples: 20s, 500ms, 2m)",
        error(head + "phase = soon\n"));
    assertEquals("s.spec:3: phase '0s' is not a duration (examples: 20s, 500ms, 2m)",
        error(head + "phase = 0s\n"));
    assertEquals("s.spec:3: warmup 'a bit' is not a duration (examples: 20s, 500ms, 2m)",
        error(head + "warmup = a bit\n"));
    assertEquals("s.spec:4: sample must be 10ms at least and no longer than phase",
        error(head + "phase = 2s\nsample = 3s\n"));
    assertEquals("s.spec:3: sample must be 10ms at least and no longer than phase",
        error(head + "sample = 5ms\n"));
    assertEquals("s.spec:3: record '4Q' is not a size (examples: 4K, 2G, 1048576)",
        error(head + "record = 4Q\n"));
    assertEquals("s.spec:3: record must be 64M at most", error(head + "record = 1G\n"));
    assertEquals("s.spec:3: size must be 256M at least", error(head + "size = 100M\n"));
    assertEquals("s.spec:3: size '-1G' is not a size (examples: 4K, 2G, 1048576)",
        error(head + "size = -1G\n"));
  }
}

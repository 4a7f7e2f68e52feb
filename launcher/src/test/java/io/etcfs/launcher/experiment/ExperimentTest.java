package io.etcfs.launcher.experiment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The runner's sequence on a stand-in cluster whose "mounts" are local directories: every
 * workload's operations are counted per phase, switches are recorded, a switch that is not live
 * falls back to a fresh cluster (or stops an existing one), and the output is written.
 */
@Timeout(60)
class ExperimentTest {
  @TempDir Path tmp;

  /** Local directories as the nodes' mounts; lock switches live, allocator switches refused. */
  static final class FakeCluster implements Cluster {
    final List<Path> mounts = new ArrayList<>();
    final List<String> did = new ArrayList<>();
    final boolean canFresh;
    Strategy now;
    long epoch;

    FakeCluster(Path dir, int nodes, boolean canFresh) throws Exception {
      // one directory seen through every "mount", as a cluster filesystem would be
      Path shared = Files.createDirectories(dir.resolve("fs"));
      for (int i = 0; i < nodes; i++) {
        mounts.add(shared);
      }
      this.canFresh = canFresh;
    }

    @Override
    public String describe() {
      return "a stand-in";
    }

    @Override
    public List<Path> mounts() {
      return mounts;
    }

    @Override
    public String begin(Strategy s) {
      did.add("begin " + s);
      now = s;
      return "";
    }

    @Override
    public void end() {
      did.add("end");
    }

    @Override
    public Strategy current() {
      return now;
    }

    @Override
    public Switched switchLive(String kind, String to) throws NotLive {
      if (kind.equals("alloc")) {
        throw new NotLive("not built yet");
      }
      did.add("switch " + kind + " " + to);
      now = new Strategy(to, now.alloc());
      long t = System.currentTimeMillis();
      return new Switched(++epoch, t - 30, t - 10, 25, "node1,node2", "pause: 25 ms");
    }

    @Override
    public boolean canStartFresh() {
      return canFresh;
    }

    @Override
    public void fresh(Strategy s) {
      did.add("fresh " + s);
      now = s;
    }

    @Override
    public void kill(int node) {
      did.add("kill " + node);
    }

    @Override
    public void restart(int node) {
      did.add("restart " + node);
    }
  }

  private Spec spec(String workload, String strategies) throws SpecException {
    return Spec.parse("workload = " + workload + "\nstrategies = " + strategies
        + "\nnodes = 2\nruns = 2\nphase = 400ms\nsample = 50ms\nwarmup = 100ms\nrecord = 512\n",
        "t.spec");
  }

  @ParameterizedTest
  @ValueSource(strings = {"handoff", "shared-writers", "shared-creates", "mixed", "node-kill"})
  void everyWorkloadCountsOperationsInEveryPhase(String workload) throws Exception {
    FakeCluster c = new FakeCluster(tmp, 2, true);
    ByteArrayOutputStream progress = new ByteArrayOutputStream();
    Results r = new Experiment(spec(workload, "etcd/arena hazelcast/arena"), c,
        tmp.resolve("out"), new PrintStream(progress, true, StandardCharsets.UTF_8)).run("cmd");
    assertEquals(2, r.runs.size());
    for (Results.Run run : r.runs) {
      for (int s = 0; s < 2; s++) {
        for (int k : r.spec.active()) {
          Results.Segment g = run.phase(s, k);
          assertTrue(g != null && g.total() > 0, workload + ": run " + run.index + ", strategy "
              + s + ", " + k + " nodes: " + g);
          assertEquals(0, g.errors(), workload + ": " + run.notes);
          // with k nodes driving, the others do nothing but finish what they began as the
          // phase began (the workers read the segment without a lock: at most two operations)
          for (int i = k; i < 2; i++) {
            assertTrue(g.ops()[i] <= 2, workload + ": node" + (i + 1) + " drove with " + k
                + " nodes: " + java.util.Arrays.toString(g.ops()));
          }
        }
      }
      assertEquals(1, run.switches.size());
      assertTrue(run.switches.get(0).live());
      long sampled = run.samples.stream().mapToLong(Results.Sample::total).sum();
      long counted = run.segments.stream().mapToLong(Results.Segment::total).sum();
      assertEquals(counted, sampled, "the samples add up to the segments");
    }
    for (String what : Workloads.latencies(workload)) {
      assertTrue(r.runs.get(0).latencies.stream().anyMatch(l -> l.what().equals(what)),
          workload + " timed no " + what);
    }
    assertEquals(List.of("begin etcd/arena", "switch lock hazelcast", "end", "begin etcd/arena",
        "switch lock hazelcast", "end"),
        c.did.stream().filter(d -> !d.startsWith("kill") && !d.startsWith("restart")).toList());
    for (String f : List.of("report.md", "raw.json", "throughput.png", "throughput-run2.png",
        "scaling.png")) {
      assertTrue(Files.size(tmp.resolve("out").resolve(f)) > 0, f);
    }
    assertTrue(progress.toString(StandardCharsets.UTF_8).contains(
        "experiment: run 2/2: hazelcast/arena, 2 nodes driving: 0.4 s phase (elapsed "));
  }

  @Test
  void anAllocatorThatCannotSwitchLiveRunsOnAFreshCluster() throws Exception {
    FakeCluster c = new FakeCluster(tmp, 2, true);
    Results r = new Experiment(spec("shared-writers", "hazelcast/arena etcd/shared"), c,
        tmp.resolve("out"), new PrintStream(new ByteArrayOutputStream())).run("cmd");
    Results.Run run = r.runs.get(0);
    // the allocator is tried first: refused, so no lock switch is spent before the new cluster
    assertEquals(List.of("begin hazelcast/arena", "fresh etcd/shared", "end"),
        c.did.subList(0, 3));
    assertEquals(List.of("alloc", Results.Segment.FRESH),
        run.switches.stream().map(Results.Switch::kind).toList());
    assertEquals("refused: not built yet", run.switches.get(0).outcome());
    assertTrue(run.notes.get(0).contains("etcd/shared ran on a fresh cluster instead"),
        run.notes.toString());
    assertTrue(run.phase(1, 2).total() > 0);
    assertTrue(Files.readString(tmp.resolve("out/report.md")).contains("| fresh |"));
  }

  @Test
  void anExistingClusterIsNotReplacedAndWhatWasMeasuredIsStillWritten() throws Exception {
    FakeCluster c = new FakeCluster(tmp, 2, false);
    Experiment e = new Experiment(spec("shared-creates", "etcd/arena etcd/shared"), c,
        tmp.resolve("out"), new PrintStream(new ByteArrayOutputStream()));
    IllegalStateException x = assertThrows(IllegalStateException.class, () -> e.run("cmd"));
    assertTrue(x.getMessage().contains("an existing cluster is not replaced"), x.getMessage());
    String report = Files.readString(tmp.resolve("out/report.md"));
    assertTrue(report.contains("the experiment stopped in run 1"), report);
    assertTrue(report.contains("| operations/s, 1 node driving | "), report);
  }
}

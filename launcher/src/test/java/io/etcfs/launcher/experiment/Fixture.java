package io.etcfs.launcher.experiment;

/**
 * A small experiment's results built by hand: handoff, two strategies, one and two nodes
 * driving, two runs, each with a live switch. Phase {@code (strategy, active)} of run {@code r}
 * completes {@code ops(r, strategy, active)} operations in exactly one second.
 */
final class Fixture {
  private Fixture() {}

  static long ops(int run, int strategy, int active) {
    return (strategy + 1) * 100L * active + (run - 1) * 20L * (strategy + 1);
  }

  static Results results() throws SpecException {
    Spec spec = Spec.parse("""
        workload = handoff
        strategies = etcd/arena hazelcast/arena
        nodes = 2
        runs = 2
        phase = 1s
        """, "fixture.spec");
    Results r = new Results(spec, new Machine("host", "Linux 6.1", 2, 8.0, "Java 17"),
        1_700_000_000_000L, "a test cluster");
    for (int run = 1; run <= 2; run++) {
      Results.Run x = new Results.Run(run, 1_700_000_000_000L + run * 100_000L);
      int seq = 0;
      long t = 0;
      for (int s = 0; s < 2; s++) {
        if (s == 1) {
          x.segments.add(new Results.Segment(seq++, Results.Segment.SWITCH, 1, 2, t, t + 500,
              new long[] {10, 10}, 0, 1.5));
          x.samples.add(new Results.Sample(t + 250, 250, seq - 1, new long[] {5, 5}, 0));
          x.samples.add(new Results.Sample(t + 500, 250, seq - 1, new long[] {5, 5}, 0));
          x.switches.add(new Results.Switch(0, 1, "lock", "etcd", "hazelcast", t, t + 500,
              "done", run, x.startedAt + t + 100, x.startedAt + t + 300, 250 + run * 10,
              "node1,node2"));
          t += 500;
        }
        for (int k = 1; k <= 2; k++) {
          long total = ops(run, s, k);
          long[] perNode = k == 1 ? new long[] {total, 0} : new long[] {total / 2, total / 2};
          x.segments.add(new Results.Segment(seq, Results.Segment.PHASE, s, k, t, t + 1000,
              perNode, s == 1 && k == 2 ? 3 : 0, 2.0 + k + s));
          for (int i = 1; i <= 4; i++) {
            long[] quarter = {perNode[0] / 4, perNode[1] / 4};
            x.samples.add(new Results.Sample(t + i * 250, 250, seq, quarter, 0));
          }
          x.latencies.add(new Results.Latency(seq, "first byte", 2.0 * (s + 1) + run, t + 400));
          x.latencies.add(new Results.Latency(seq, "first byte", 4.0 * (s + 1) + run, t + 800));
          seq++;
          t += 1000;
        }
      }
      r.runs.add(x);
    }
    r.runs.get(1).notes.add("a note \"quoted\"\nover two lines");
    r.endedAt = r.startedAt + 300_000;
    return r;
  }
}

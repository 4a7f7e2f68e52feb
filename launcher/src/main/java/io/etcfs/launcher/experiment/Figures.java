package io.etcfs.launcher.experiment;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The figures of an experiment, computed from its results: per strategy, per figure, the value
 * of each run, summarised over the runs. The report's table and the scaling plot both read
 * these, so the two cannot disagree.
 */
public final class Figures {
  /** One row of the report: a figure, and each strategy's values over the runs (may be empty). */
  public record Row(String figure, List<List<Double>> perStrategy) {
    /** The summary over runs for strategy {@code i}, or null if it has no value. */
    public Stats stats(int i) {
      List<Double> v = perStrategy.get(i);
      return v.isEmpty() ? null : Stats.of(v);
    }
  }

  private Figures() {}

  /** The throughput figure of {@code active} nodes, per strategy, one value per run. */
  public static List<List<Double>> throughput(Results r, int active) {
    List<List<Double>> per = new ArrayList<>();
    for (int i = 0; i < r.spec.strategies().size(); i++) {
      List<Double> values = new ArrayList<>();
      for (Results.Run run : r.runs) {
        Results.Segment s = run.phase(i, active);
        if (s != null) {
          values.add(s.rate());
        }
      }
      per.add(values);
    }
    return per;
  }

  /** Every row of the report's table, in order. */
  public static List<Row> rows(Results r) {
    List<Row> rows = new ArrayList<>();
    for (int k : r.spec.active()) {
      rows.add(new Row("operations/s, " + k + " node" + (k == 1 ? "" : "s") + " driving",
          throughput(r, k)));
    }
    for (String what : Workloads.latencies(r.spec.workload())) {
      for (int k : r.spec.active()) {
        rows.add(new Row(what + ", ms (each run's median), " + k + " node" + (k == 1 ? "" : "s")
            + " driving", latency(r, what, k)));
      }
    }
    rows.add(new Row("failed operations in the phases (per run)",
        errors(r, Results.Segment.PHASE)));
    rows.add(new Row("failed operations while switching to it (per run)",
        errors(r, Results.Segment.SWITCH)));
    return rows;
  }

  /** Per strategy, each run's failed operations in its segments of {@code kind}. */
  private static List<List<Double>> errors(Results r, String kind) {
    List<List<Double>> per = new ArrayList<>();
    for (int i = 0; i < r.spec.strategies().size(); i++) {
      List<Double> values = new ArrayList<>();
      for (Results.Run run : r.runs) {
        long e = 0;
        boolean any = false;
        for (Results.Segment s : run.segments) {
          if (s.kind().equals(kind) && s.strategy() == i) {
            e += s.errors();
            any = true;
          }
        }
        if (any) {
          values.add((double) e);
        }
      }
      per.add(values);
    }
    return per;
  }

  /** Each run's median of the latencies {@code what} of one phase, per strategy. */
  static List<List<Double>> latency(Results r, String what, int active) {
    List<List<Double>> per = new ArrayList<>();
    for (int i = 0; i < r.spec.strategies().size(); i++) {
      List<Double> values = new ArrayList<>();
      for (Results.Run run : r.runs) {
        Results.Segment s = run.phase(i, active);
        if (s != null) {
          List<Double> l = run.latencies(s.seq(), what);
          if (!l.isEmpty()) {
            values.add(Stats.of(l).median());
          }
        }
      }
      per.add(values);
    }
    return per;
  }

  /** Every live switch's pause, by direction ("etcd/arena → hazelcast/arena"), in ms. */
  public static Map<String, List<Double>> pauses(Results r) {
    Map<String, List<Double>> by = new LinkedHashMap<>();
    for (Results.Run run : r.runs) {
      for (Results.Switch w : run.switches) {
        if (w.live() && w.pauseMillis() >= 0) {
          by.computeIfAbsent(w.kind() + " " + w.fromName() + " → " + w.toName(),
              k -> new ArrayList<>()).add((double) w.pauseMillis());
        }
      }
    }
    return by;
  }
}

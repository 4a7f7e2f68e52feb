package io.etcfs.launcher.experiment;

import java.util.ArrayList;
import java.util.List;

/**
 * Everything one experiment measured, run by run: the samples, the phases, the latencies the
 * workload timed, and every switch. Times within a run are milliseconds since the run started.
 */
public final class Results {
  /**
   * One sampling interval.
   *
   * @param at its end, ms since the run started
   * @param millis its length
   * @param segment the segment it ended in ({@link Segment#seq})
   * @param ops operations each node completed in it
   * @param errors operations that failed in it (all nodes)
   */
  public record Sample(long at, long millis, int segment, long[] ops, long errors) {
    public long total() {
      long t = 0;
      for (long o : ops) {
        t += o;
      }
      return t;
    }
  }

  /**
   * A stretch of a run: a measured phase (one strategy, {@code active} nodes driving), a live
   * switch, a fresh cluster being brought up, or the unmeasured warm-up before the first phase.
   *
   * @param seq its number in the run, from 0
   * @param kind {@link #PHASE}, {@link #SWITCH}, {@link #FRESH} or {@link #WARMUP}
   * @param strategy index of the strategy in the spec (for a switch or fresh cluster: the target)
   * @param active nodes driving the workload
   * @param start ms since the run started
   * @param end ms since the run started
   * @param ops operations each node completed in it, counted exactly at its boundaries
   * @param errors operations that failed in it
   * @param loadAverage the machine's 1-minute load average at its end (-1 where unknown)
   */
  public record Segment(int seq, String kind, int strategy, int active, long start, long end,
      long[] ops, long errors, double loadAverage) {
    public static final String PHASE = "phase";
    public static final String SWITCH = "switch";
    public static final String FRESH = "fresh";
    public static final String WARMUP = "warmup";

    public long total() {
      long t = 0;
      for (long o : ops) {
        t += o;
      }
      return t;
    }

    /** Operations per second over the segment. */
    public double rate() {
      return end > start ? total() * 1000.0 / (end - start) : 0;
    }
  }

  /**
   * One latency the workload timed (time to first byte, takeover, restart), in a segment.
   *
   * @param at ms since the run started: when it ended
   */
  public record Latency(int segment, String what, double millis, long at) {}

  /**
   * One change of strategy between phases.
   *
   * @param from index of the strategy left
   * @param to index of the strategy switched to
   * @param kind what switched: {@code lock}, {@code alloc}, or {@code fresh} (a new cluster)
   * @param requested ms since the run started: asked
   * @param returned ms since the run started: the answer came (the new phase may start)
   * @param outcome {@code done}, or why it was not done live
   * @param epoch the switch epoch in etcd (0 for a fresh cluster)
   * @param firstStop epoch ms, the first node stopping (0 if none)
   * @param cutover epoch ms, the cutover committed (0 if none)
   * @param pauseMillis first node stopping to last resuming (-1 if none)
   * @param nodes the nodes that took part
   */
  public record Switch(int from, int to, String kind, String fromName, String toName,
      long requested, long returned, String outcome, long epoch, long firstStop, long cutover,
      long pauseMillis, String nodes) {
    public boolean live() {
      return !kind.equals(Segment.FRESH) && outcome.equals("done");
    }
  }

  /** One run of the experiment. */
  public static final class Run {
    public final int index;
    /** Epoch ms when it started: the zero of its times. */
    public final long startedAt;
    public final List<Sample> samples = new ArrayList<>();
    public final List<Segment> segments = new ArrayList<>();
    public final List<Latency> latencies = new ArrayList<>();
    public final List<Switch> switches = new ArrayList<>();
    /** What happened that a reader of the report must know (a fallback, a failure). */
    public final List<String> notes = new ArrayList<>();

    public Run(int index, long startedAt) {
      this.index = index;
      this.startedAt = startedAt;
    }

    /** The measured phase of {@code strategy} with {@code active} nodes, or null. */
    public Segment phase(int strategy, int active) {
      for (Segment s : segments) {
        if (s.kind().equals(Segment.PHASE) && s.strategy() == strategy && s.active() == active) {
          return s;
        }
      }
      return null;
    }

    /** The latencies called {@code what} timed in {@code segment}. */
    public List<Double> latencies(int segment, String what) {
      List<Double> out = new ArrayList<>();
      for (Latency l : latencies) {
        if (l.segment() == segment && l.what().equals(what)) {
          out.add(l.millis());
        }
      }
      return out;
    }
  }

  public final Spec spec;
  public final Machine machine;
  /** Epoch ms when the experiment started. */
  public final long startedAt;
  /** What the experiment ran on: a local cluster, or the existing one it was given. */
  public final String cluster;
  public final List<Run> runs = new ArrayList<>();
  public long endedAt;

  public Results(Spec spec, Machine machine, long startedAt, String cluster) {
    this.spec = spec;
    this.machine = machine;
    this.startedAt = startedAt;
    this.cluster = cluster;
  }
}

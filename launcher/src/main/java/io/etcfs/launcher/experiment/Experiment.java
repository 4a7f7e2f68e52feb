package io.etcfs.launcher.experiment;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One experiment: for each run, the cluster brought to the first strategy, then each strategy
 * in turn — a live switch to it while the workload keeps running, then one phase per number of
 * nodes driving — with every sample, phase and switch recorded; then the report, the raw JSON
 * and the plots.
 */
public final class Experiment {
  /** How long a killed node's file may take to become writable elsewhere before it is a failure. */
  private static final long TAKEOVER_BOUND_MILLIS = 120_000;

  private final Spec spec;
  private final Cluster cluster;
  private final Path out;
  private final PrintStream progress;
  private final Results results;
  private final long plannedPhaseMillis;
  private long phaseMillisDone;
  private long overheadPerRun = -1;
  private long runStartedAt;
  private long phaseMillisInRun;
  /** When the phase under way started, or 0 between phases. */
  private long phaseStartedAt;

  public Experiment(Spec spec, Cluster cluster, Path out, PrintStream progress) {
    this.spec = spec;
    this.cluster = cluster;
    this.out = out;
    this.progress = progress;
    this.results = new Results(spec, Machine.here(), System.currentTimeMillis(),
        cluster.describe());
    this.plannedPhaseMillis = spec.runs() * spec.strategies().size() * spec.active().size()
        * spec.phase().toMillis();
  }

  /**
   * Runs it and writes the report, the raw JSON and the plots into the output directory, after
   * each run and at the end. What was measured is written even when a run fails part-way; the
   * failure is then rethrown.
   *
   * @param command the command line, for the report
   */
  public Results run(String command) throws Exception {
    Files.createDirectories(out);
    Exception failed = null;
    int r = 0;
    try {
      for (r = 1; r <= spec.runs(); r++) {
        runOnce(r);
        if (r < spec.runs()) {
          // what the runs so far measured, in case the rest is interrupted
          results.endedAt = System.currentTimeMillis();
          write(command);
        }
      }
    } catch (Exception e) {
      failed = e;
      if (!results.runs.isEmpty()) {
        results.runs.get(results.runs.size() - 1).notes.add("the experiment stopped in run " + r
            + ": " + e);
      }
    }
    results.endedAt = System.currentTimeMillis();
    write(command);
    if (failed != null) {
      throw failed;
    }
    return results;
  }

  private void runOnce(int r) throws Exception {
    long runStarted = System.currentTimeMillis();
    runStartedAt = runStarted;
    phaseMillisInRun = 0;
    say(r, "bringing the cluster to " + spec.strategies().get(0));
    String note = cluster.begin(spec.strategies().get(0));
    Results.Run run = new Results.Run(r, System.currentTimeMillis());
    results.runs.add(run);
    if (!note.isEmpty()) {
      run.notes.add(note);
    }
    Load load = new Load(Workloads.of(spec.workload(), cluster.mounts(), "experiment-run" + r,
        spec.record()), spec.nodes(), spec.sample(), run, m -> logLine(run, m));
    boolean ended = false;
    try {
      List<Integer> active = spec.active();
      if (!spec.warmup().isZero()) {
        load.begin(Results.Segment.WARMUP, 0, active.get(active.size() - 1), true);
        load.start();
        say(r, "warming up on " + spec.strategies().get(0) + " for "
            + Report.seconds(spec.warmup()) + " (not measured)");
        Thread.sleep(spec.warmup().toMillis());
      } else {
        load.begin(Results.Segment.PHASE, 0, active.get(0), true);
        load.start();
      }
      for (int i = 0; i < spec.strategies().size(); i++) {
        if (i > 0) {
          change(run, load, i - 1, i);
        }
        for (int k : spec.active()) {
          phase(run, load, i, k);
        }
      }
      load.stop();
      cluster.end();
      ended = true;
    } finally {
      if (!ended) {
        try {
          load.stop();
        } catch (RuntimeException e) {
          // the run failed before the load started: nothing to stop
        }
        cluster.end();
      }
    }
    long phases = spec.strategies().size() * spec.active().size() * spec.phase().toMillis();
    overheadPerRun = Math.max(0, System.currentTimeMillis() - runStarted - phases);
  }

  /** One measured phase: strategy {@code i}, {@code k} nodes driving. */
  private void phase(Results.Run run, Load load, int i, int k) throws Exception {
    Strategy s = spec.strategies().get(i);
    if (!(i == 0 && k == spec.active().get(0) && spec.warmup().isZero())) {
      load.begin(Results.Segment.PHASE, i, k, true); // else it began with the load
    }
    long start = System.currentTimeMillis();
    long end = start + spec.phase().toMillis();
    phaseStartedAt = start;
    String what = s + ", " + k + " node" + (k == 1 ? "" : "s") + " driving";
    say(run.index, what + ": " + Report.seconds(spec.phase()) + " phase");
    if (spec.workload().equals("node-kill")) {
      killCycle(run, load, k, start + spec.phase().toMillis() / 4);
    }
    long lastSaid = System.currentTimeMillis();
    while (System.currentTimeMillis() < end) {
      Thread.sleep(Math.min(250, Math.max(1, end - System.currentTimeMillis())));
      if (System.currentTimeMillis() - lastSaid >= 5000) {
        lastSaid = System.currentTimeMillis();
        say(run.index, what + ": " + (lastSaid - start) / 1000 + " s of "
            + Report.seconds(spec.phase()));
      }
    }
    phaseStartedAt = 0;
    phaseMillisDone += spec.phase().toMillis();
    phaseMillisInRun += spec.phase().toMillis();
  }

  /**
   * Kills the last driving node at {@code at}, times how long until node 1 writes its file,
   * mounts it again and times that too.
   */
  private void killCycle(Results.Run run, Load load, int k, long at) throws Exception {
    int victim = k - 1;
    Thread.sleep(Math.max(0, at - System.currentTimeMillis()));
    say(run.index, "killing node" + (victim + 1));
    load.down(victim, true);
    long t0 = System.nanoTime();
    cluster.kill(victim);
    Workloads.OwnWriters writers = (Workloads.OwnWriters) load.workload();
    IOException last = null;
    while (true) {
      try {
        writers.appendAs(0, victim);
        break;
      } catch (IOException e) {
        last = e;
        if ((System.nanoTime() - t0) / 1_000_000 > TAKEOVER_BOUND_MILLIS) {
          throw new IOException("node1 could not write node" + (victim + 1) + "'s file within "
              + TAKEOVER_BOUND_MILLIS / 1000 + " s of the kill: " + last.getMessage(), last);
        }
        Thread.sleep(20);
      }
    }
    load.latency("takeover", (System.nanoTime() - t0) / 1e6);
    say(run.index, "node1 took over node" + (victim + 1) + "'s file; mounting it again");
    cluster.restart(victim);
    load.latency("restart", (System.nanoTime() - t0) / 1e6);
    load.down(victim, false);
  }

  /** From strategy {@code from} to {@code to}: live, kind by kind, else on a fresh cluster. */
  private void change(Results.Run run, Load load, int from, int to) throws Exception {
    Strategy a = spec.strategies().get(from);
    Strategy b = spec.strategies().get(to);
    // the allocator first: if it cannot switch live, the cluster is replaced anyway, and a
    // lock switch before it would have been for nothing
    List<String[]> steps = new ArrayList<>();
    if (!a.alloc().equals(b.alloc())) {
      steps.add(new String[] {"alloc", a.alloc(), b.alloc()});
    }
    if (!a.lock().equals(b.lock())) {
      steps.add(new String[] {"lock", a.lock(), b.lock()});
    }
    int driving = spec.active().get(spec.active().size() - 1);
    load.begin(Results.Segment.SWITCH, to, driving, false);
    String notLive = null;
    for (String[] step : steps) {
      say(run.index, "switching the " + step[0] + " from " + step[1] + " to " + step[2]
          + ", live, under load");
      long asked = load.now();
      try {
        Cluster.Switched w = cluster.switchLive(step[0], step[2]);
        run.switches.add(new Results.Switch(from, to, step[0], step[1], step[2], asked,
            load.now(), "done", w.epoch(), w.firstStop(), w.cutover(), w.pauseMillis(),
            w.nodes()));
        say(run.index, w.said().lines().filter(l -> l.startsWith("pause")).findFirst()
            .orElse("switched"));
      } catch (Cluster.NotLive e) {
        notLive = "the " + step[0] + " could not be switched live from " + step[1] + " to "
            + step[2] + " (" + e.getMessage() + ")";
        run.switches.add(new Results.Switch(from, to, step[0], step[1], step[2], asked,
            load.now(), "refused: " + e.getMessage(), 0, 0, 0, -1, ""));
        break;
      }
    }
    if (notLive != null) {
      if (!cluster.canStartFresh()) {
        throw new IllegalStateException(notLive + "; an existing cluster is not replaced");
      }
      say(run.index, notLive + ": starting a fresh cluster with " + b);
      run.notes.add(notLive + "; " + b + " ran on a fresh cluster instead (nothing carried"
          + " over)");
      load.begin(Results.Segment.FRESH, to, driving, false);
      long asked = load.now();
      load.pause();
      cluster.fresh(b); // the workers resume with the next segment, on its new files
      run.switches.add(new Results.Switch(from, to, Results.Segment.FRESH, a.toString(),
          b.toString(), asked, load.now(), "fresh cluster", 0, 0, 0, -1, ""));
      if (!spec.warmup().isZero()) { // a new cluster is as cold as the run's first one
        load.begin(Results.Segment.WARMUP, to, driving, true);
        say(run.index, "warming up on " + b + " for " + Report.seconds(spec.warmup())
            + " (not measured)");
        Thread.sleep(spec.warmup().toMillis());
      }
    }
    Strategy now = cluster.current();
    if (!now.equals(b)) {
      throw new IllegalStateException("the cluster's record names " + now + " after the change"
          + " to " + b);
    }
  }

  private void write(String command) throws IOException {
    RawJson.write(results, out.resolve("raw.json"));
    List<String> plots = new ArrayList<>();
    for (Results.Run run : results.runs) {
      if (run.samples.isEmpty()) {
        continue;
      }
      String name = run.index == 1 ? "throughput.png" : "throughput-run" + run.index + ".png";
      Charts.throughput(results, run, out.resolve(name));
      plots.add(name);
    }
    if (results.runs.stream().anyMatch(run -> !run.segments.isEmpty())) {
      Charts.scaling(results, out.resolve("scaling.png"));
      plots.add("scaling.png");
    }
    Report.write(results, command, plots, out.resolve("report.md"));
  }

  private void logLine(Results.Run run, String message) {
    synchronized (run) {
      if (run.notes.stream().filter(n -> n.startsWith("error: ")).count() < 20) {
        run.notes.add("error: " + message);
      }
    }
    progress.println("experiment: run " + run.index + ": " + message);
  }

  /**
   * One line of progress: the run, what it does now, the time elapsed and an estimate of what
   * is left (the phases still to run, plus each run's time outside its phases: cluster start,
   * switches, stop — as the first run took, or a minute until it is known).
   */
  private void say(int run, String what) {
    long now = System.currentTimeMillis();
    long elapsed = now - results.startedAt;
    long perRun = overheadPerRun >= 0 ? overheadPerRun : 60_000;
    long inPhase = phaseStartedAt == 0 ? 0
        : Math.min(now - phaseStartedAt, spec.phase().toMillis());
    long spentThisRun = Math.max(0, now - runStartedAt - phaseMillisInRun - inPhase);
    long eta = Math.max(0, plannedPhaseMillis - phaseMillisDone - inPhase)
        + Math.max(0, perRun - spentThisRun) + perRun * (spec.runs() - run);
    progress.println(String.format(Locale.ROOT, "experiment: run %d/%d: %s (elapsed %s, about"
        + " %s left)", run, spec.runs(), what, clock(elapsed), clock(eta)));
  }

  static String clock(long millis) {
    long s = millis / 1000;
    return s >= 3600 ? String.format(Locale.ROOT, "%dh%02dm", s / 3600, s / 60 % 60)
        : String.format(Locale.ROOT, "%dm%02ds", s / 60, s % 60);
  }
}

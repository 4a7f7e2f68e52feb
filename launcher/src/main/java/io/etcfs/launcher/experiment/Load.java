package io.etcfs.launcher.experiment;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * A workload driven on every node at once, from this process: one thread per node doing real
 * file I/O on that node's mount, counting what completes, and a sampler that records the counts
 * every sampling interval. It runs for a whole run, through phases and switches alike; the
 * runner marks where each segment begins ({@link #begin}), so a switch's pause shows in the
 * samples as the workload saw it.
 */
final class Load {
  /** What the workers do now: the segment, its file set, how many nodes drive. */
  record Current(int segment, int fileSet, int active) {}

  private final Workload workload;
  private final int nodes;
  private final long sampleMillis;
  private final Results.Run run;
  private final Consumer<String> log;
  private final AtomicLongArray ops;
  private final AtomicLong errors = new AtomicLong();
  private final AtomicIntegerArray down;
  private final AtomicIntegerArray idle;
  private final AtomicLongArray errorsLogged;
  private final Thread[] workers;
  private Thread sampler;
  private volatile boolean stopped;
  private volatile boolean paused;
  private volatile Current current;

  // the open segment, and the counters at its start and at the last sample (guarded by this)
  private String kind;
  private int strategy;
  private long segmentStart;
  private long[] atSegmentStart;
  private long errorsAtSegmentStart;
  private long[] atLastSample;
  private long errorsAtLastSample;
  private long lastSample;
  private int fileSet = -1;

  Load(Workload workload, int nodes, java.time.Duration sample, Results.Run run,
      Consumer<String> log) {
    this.workload = workload;
    this.nodes = nodes;
    this.sampleMillis = sample.toMillis();
    this.run = run;
    this.log = log;
    this.ops = new AtomicLongArray(nodes);
    this.down = new AtomicIntegerArray(nodes);
    this.idle = new AtomicIntegerArray(nodes);
    this.errorsLogged = new AtomicLongArray(nodes);
    this.workers = new Thread[nodes];
  }

  /** Milliseconds since the run started. */
  long now() {
    return System.currentTimeMillis() - run.startedAt;
  }

  /**
   * Ends the open segment (counted exactly here) and begins another; with {@code newFiles} the
   * workload moves to a fresh set of files, prepared before any worker sees it.
   *
   * @return the new segment's number
   */
  int begin(String kind, int strategy, int active, boolean newFiles) throws IOException {
    if (newFiles) {
      workload.prepare(fileSet + 1);
    }
    double load = Machine.loadAverage();
    synchronized (this) {
      // one reading of the counters and the clock ends this segment and begins the next (an
      // operation completing meanwhile is counted in exactly one of them), and the workers
      // see the next at once after it
      long[] c = counts();
      long e = errors.get();
      long t = now();
      Current previous = current;
      int seq = previous == null ? 0 : previous.segment() + 1;
      current = new Current(seq, newFiles ? fileSet + 1 : fileSet, active);
      paused = false;
      close(previous, c, e, t, load);
      if (newFiles) {
        fileSet++;
      }
      this.kind = kind;
      this.strategy = strategy;
      this.segmentStart = t;
      this.atSegmentStart = c;
      this.errorsAtSegmentStart = e;
      return seq;
    }
  }

  Workload workload() {
    return workload;
  }

  /**
   * Stops every worker from starting another operation and waits until each has finished the
   * one it was in (the cluster is about to be replaced); the next {@link #begin} resumes them.
   */
  void pause() throws InterruptedException {
    paused = true;
    long deadline = System.nanoTime() + 60_000_000_000L;
    for (int i = 0; i < nodes; i++) {
      while (idle.get(i) == 0 && workers[i] != null && workers[i].isAlive()) {
        if (System.nanoTime() > deadline) {
          log.accept("node" + (i + 1) + " still in an operation 60 s after the pause");
          break;
        }
        Thread.sleep(5);
      }
    }
  }

  /** Ends segment {@code s}, if any, at counters {@code c}, errors {@code e} and time {@code t}. */
  private void close(Current s, long[] c, long e, long t, double load) {
    if (s == null) {
      return;
    }
    long[] in = new long[nodes];
    for (int i = 0; i < nodes; i++) {
      in[i] = c[i] - atSegmentStart[i];
    }
    run.segments.add(new Results.Segment(s.segment(), kind, strategy, s.active(),
        segmentStart, t, in, e - errorsAtSegmentStart, load));
  }

  void start() {
    atLastSample = counts();
    lastSample = now();
    for (int i = 0; i < nodes; i++) {
      int node = i;
      workers[i] = new Thread(() -> work(node), "experiment-node" + (i + 1));
      workers[i].setDaemon(true);
      workers[i].start();
    }
    sampler = new Thread(this::sample, "experiment-sampler");
    sampler.setDaemon(true);
    sampler.start();
  }

  /** Stops every worker (each finishes its operation first, bounded) and ends the segment. */
  void stop() throws InterruptedException {
    stopped = true;
    sampler.interrupt();
    sampler.join(10_000);
    for (Thread t : workers) {
      t.join(60_000);
      if (t.isAlive()) {
        log.accept(t.getName() + " still in an operation after 60 s; left behind");
      }
    }
    double load = Machine.loadAverage();
    synchronized (this) {
      takeSample();
      close(current, atLastSample, errorsAtLastSample, lastSample, load);
      current = null;
    }
    for (int i = 0; i < nodes; i++) {
      workload.reset(i);
    }
  }

  /** Node {@code i} is going down (or coming back): its worker stops (or resumes) driving. */
  void down(int i, boolean isDown) {
    down.set(i, isDown ? 1 : 0);
  }

  /** Records a latency the workload or the runner timed, in the open segment. */
  synchronized void latency(String what, double millis) {
    run.latencies.add(new Results.Latency(current.segment(), what, millis, now()));
  }

  private long[] counts() {
    long[] c = new long[nodes];
    for (int i = 0; i < nodes; i++) {
      c[i] = ops.get(i);
    }
    return c;
  }

  private void sample() {
    long next = System.nanoTime();
    while (!stopped) {
      next += sampleMillis * 1_000_000L;
      long wait = next - System.nanoTime();
      if (wait > 0) {
        LockSupport.parkNanos(wait);
      }
      if (stopped) {
        return;
      }
      synchronized (this) {
        takeSample();
      }
    }
  }

  private void takeSample() {
    long t = now();
    long[] c = counts();
    long[] in = new long[nodes];
    for (int i = 0; i < nodes; i++) {
      in[i] = c[i] - atLastSample[i];
    }
    long e = errors.get();
    run.samples.add(new Results.Sample(t, t - lastSample, current.segment(), in,
        e - errorsAtLastSample));
    atLastSample = c;
    errorsAtLastSample = e;
    lastSample = t;
  }

  private void work(int node) {
    while (!stopped) {
      idle.set(node, 0);
      Current c = current;
      if (c == null || paused || node >= c.active() || down.get(node) == 1) {
        idle.set(node, 1);
        workload.reset(node);
        LockSupport.parkNanos(5_000_000L);
        continue;
      }
      try {
        if (workload.op(node, c, this)) {
          ops.incrementAndGet(node);
        } else {
          LockSupport.parkNanos(100_000L);
        }
      } catch (IOException | RuntimeException e) {
        workload.reset(node);
        if (down.get(node) == 1 || stopped) {
          continue; // its node was taken down under it: not a failure of the strategy
        }
        errors.incrementAndGet();
        if (errorsLogged.getAndIncrement(node) < 5) {
          log.accept("node" + (node + 1) + ": " + e);
        }
        LockSupport.parkNanos(100_000_000L);
      } catch (InterruptedException e) {
        return;
      }
    }
  }
}

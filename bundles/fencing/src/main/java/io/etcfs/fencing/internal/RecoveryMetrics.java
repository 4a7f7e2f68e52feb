package io.etcfs.fencing.internal;

import io.etcfs.spi.metrics.MetricSource;
import io.etcfs.spi.metrics.Metrics;
import io.etcfs.support.metrics.LatencyHistogram;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * What this node's recovery scans saw and did: the members and heartbeat slots of the last
 * scan, dead incarnations found, and the recoveries this node ran (elected) with their outcome
 * and duration.
 */
final class RecoveryMetrics implements MetricSource {
  private final AtomicInteger members = new AtomicInteger(-1);
  private final AtomicInteger slots = new AtomicInteger(-1);
  private final LongAdder scans = new LongAdder();
  private final LongAdder deadSeen = new LongAdder();
  private final LongAdder recovered = new LongAdder();
  private final LongAdder failed = new LongAdder();
  private final LatencyHistogram durations = new LatencyHistogram();

  void scanned(int memberCount, int slotCount) {
    scans.increment();
    members.set(memberCount);
    slots.set(slotCount);
  }

  void deadSeen() {
    deadSeen.increment();
  }

  void recovered(long elapsedNanos) {
    recovered.increment();
    durations.record(elapsedNanos);
  }

  void failed() {
    failed.increment();
  }

  @Override
  public void collect(Metrics out) {
    out.counter("etcfs_recovery_scans_total", "Scans of the membership for dead incarnations"
        + " by this node", scans.sum());
    if (members.get() >= 0) {
      out.gauge("etcfs_members", "Live members (membership keys) seen by this node's last"
          + " recovery scan", members.get());
      out.gauge("etcfs_heartbeat_slots", "Device heartbeat slots held, seen by this node's last"
          + " recovery scan (live members and dead ones not yet recovered)", slots.get());
    }
    out.counter("etcfs_recovery_dead_seen_total", "Dead incarnations this node's scans found"
        + " and tried to recover (a retry counts again)", deadSeen.sum());
    out.counter("etcfs_recoveries_total", "Recoveries this node ran, elected, by outcome",
        recovered.sum(), "outcome", "recovered");
    out.counter("etcfs_recoveries_total", "", failed.sum(), "outcome", "failed");
    durations.writeTo(out, "etcfs_recovery_duration_seconds", "Recoveries this node completed:"
        + " from finding the node dead to its arenas taken back and the fence recorded");
  }
}

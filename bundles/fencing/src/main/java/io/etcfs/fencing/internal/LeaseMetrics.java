package io.etcfs.fencing.internal;

import io.etcfs.spi.metrics.MetricSource;
import io.etcfs.spi.metrics.Metrics;
import java.util.function.Supplier;

/** This node's membership lease as metrics: what is left by its own deadline, and its TTL. */
final class LeaseMetrics implements MetricSource {
  private final Supplier<NodeMembership.LeaseState> lease;

  LeaseMetrics(Supplier<NodeMembership.LeaseState> lease) {
    this.lease = lease;
  }

  @Override
  public void collect(Metrics out) {
    NodeMembership.LeaseState s = lease.get();
    out.gauge("etcfs_membership_lease_remaining_seconds", "Time left before this node fences"
        + " itself, by its own deadline (from the last acknowledged keep-alive, monotonic"
        + " clock); 0 once fenced", s.fenced() ? 0 : s.left().toNanos() / 1e9);
    out.gauge("etcfs_membership_lease_ttl_seconds", "The membership lease's TTL",
        s.ttl().toSeconds());
    out.gauge("etcfs_membership_fenced", "1 once this incarnation is fenced or left, else 0",
        s.fenced() ? 1 : 0);
  }
}

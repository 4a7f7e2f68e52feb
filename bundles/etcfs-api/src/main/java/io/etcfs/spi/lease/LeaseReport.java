package io.etcfs.spi.lease;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * A service that holds leases on this node and shows them to the shell's {@code leases}: the lock
 * backend its lock session, the core its POSIX-lock lease. Whiteboard: every registered report is
 * listed.
 */
@ConsumerType
public interface LeaseReport {
  /**
   * One lease.
   *
   * @param kind what it is for (e.g. {@code lock session})
   * @param id the etcd lease id
   * @param ttl the TTL asked for
   * @param left time left by this node's own deadline (zero or negative: lapsed)
   * @param lastAcknowledged when the last acknowledged keep-alive was sent (wall clock), if any
   */
  record Lease(String kind, long id, Duration ttl, Duration left,
      Optional<Instant> lastAcknowledged) {}

  /** The leases held now (none while nothing needs one). */
  List<Lease> leases();

  /**
   * A lease kept against {@code deadline}, its last keep-alive acknowledged at {@code
   * lastAcknowledged}.
   */
  static Lease of(String kind, long id, Duration ttl, Deadline deadline,
      Optional<Instant> lastAcknowledged) {
    return new Lease(kind, id, ttl, Duration.ofNanos(deadline.at() - deadline.now()),
        lastAcknowledged);
  }
}

package io.etcfs.core.fs.plock;

import io.etcfs.spi.lease.Deadline;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.MetaStoreException;
import io.etcfs.support.lease.LeaseKeeper;
import java.time.Duration;
import java.util.logging.Logger;

/**
 * The lease this node's POSIX and flock lock keys live under, so that they vanish within one TTL
 * of the node's death. Granted on the first lock (a node that never locks keeps no lease alive)
 * and renewed by a {@link LeaseKeeper} with the node's own deadline. When the lease lapses the
 * node's locks are gone for every other node; the next lock asks for a new lease.
 */
final class NodeLease {
  private static final Logger LOG = Logger.getLogger(NodeLease.class.getName());

  private final MetaStore store;
  private final Duration ttl;
  private final String name;
  private long lease;
  private Deadline deadline;
  private LeaseKeeper keeper;

  NodeLease(MetaStore store, Duration ttl, String name) {
    this.store = store;
    this.ttl = ttl;
    this.name = name;
  }

  /** The lease to put lock keys under, granted now if there is none alive. */
  synchronized long current() {
    if (keeper != null && !deadline.expired()) {
      return lease;
    }
    if (keeper != null) {
      // past the deadline the keys under it count as gone, whatever the store still says
      stopKeeper();
      revokeQuietly(lease);
    }
    long sentAt = System.nanoTime();
    long granted = store.grantLease(ttl);
    // etcd may grant more than asked, never less: the deadline counts only what was asked.
    Deadline d = new Deadline(System::nanoTime, sentAt + ttl.toNanos());
    LeaseKeeper k = new LeaseKeeper(store, granted, ttl, d, name, reason -> lapsed(granted,
        reason));
    this.lease = granted;
    this.deadline = d;
    this.keeper = k;
    k.start();
    return granted;
  }

  /** The lease as it stands, or empty while no lock needs one. */
  synchronized java.util.Optional<io.etcfs.spi.lease.LeaseReport.Lease> report(String kind) {
    if (keeper == null || deadline.expired()) {
      return java.util.Optional.empty();
    }
    return java.util.Optional.of(io.etcfs.spi.lease.LeaseReport.of(kind, lease, ttl, deadline,
        keeper.lastAcknowledged()));
  }

  /** A commit found {@code id} unknown to the store: forget it, the next lock takes a new one. */
  synchronized void lost(long id) {
    if (keeper != null && lease == id) {
      deadline.expire();
    }
  }

  /**
   * Runs on the keeper's thread: another node may already hold what this node's keys held, so
   * the keys must go now even if the store still knows the lease.
   */
  private void lapsed(long id, String reason) {
    LOG.warning("the POSIX/flock lock lease " + Long.toHexString(id) + " of " + name
        + " lapsed (" + reason + "): this node's fcntl and flock locks are released");
    revokeQuietly(id);
  }

  synchronized void close() {
    if (keeper != null) {
      stopKeeper();
      // A lapsed lease is etcd's to expire; the node may be cut off, and asking would wait out
      // the request timeout.
      if (!deadline.expired()) {
        revokeQuietly(lease);
      }
      keeper = null;
    }
  }

  private void stopKeeper() {
    if (keeper != null) {
      keeper.stop();
    }
  }

  private void revokeQuietly(long id) {
    try {
      store.revokeLease(id);
    } catch (MetaStoreException e) {
      // it runs out by itself within its TTL
    }
  }
}

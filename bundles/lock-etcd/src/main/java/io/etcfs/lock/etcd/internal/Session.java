package io.etcfs.lock.etcd.internal;

import io.etcfs.spi.lease.Deadline;
import io.etcfs.spi.lock.LockSession;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.MetaStoreException;
import io.etcfs.support.lease.LeaseKeeper;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.BiConsumer;

/**
 * A lock session: one etcd lease renewed every third of its TTL, with this node's own deadline
 * (from when it sent the last acknowledged renewal, on the monotonic clock). Once the deadline
 * passes the session is expired for good, whatever a late acknowledgement says: by then another
 * node may hold the locks it held.
 */
final class Session implements LockSession {
  final long lease;
  private final MetaStore store;
  private final Deadline deadline;
  private final LeaseKeeper keeper;
  private final Duration ttl;
  private final CompletableFuture<Void> done = new CompletableFuture<>();

  private Session(MetaStore store, long lease, Deadline deadline, Duration ttl, String name,
      BiConsumer<Session, String> onEnd) {
    this.store = store;
    this.ttl = ttl;
    this.lease = lease;
    this.deadline = deadline;
    this.keeper = new LeaseKeeper(store, lease, ttl, deadline, name, reason -> {
      onEnd.accept(this, reason);
      done.complete(null);
      revokeQuietly();
    });
  }

  static Session open(MetaStore store, Duration ttl, String name,
      BiConsumer<Session, String> onEnd) {
    long sentAt = System.nanoTime();
    long lease = store.grantLease(ttl);
    // etcd may grant more than asked, never less; the deadline counts only what was asked, from
    // before the grant was sent.
    Deadline deadline = new Deadline(System::nanoTime, sentAt + ttl.toNanos());
    Session s = new Session(store, lease, deadline, ttl, name, onEnd);
    s.keeper.start();
    return s;
  }

  @Override
  public long id() {
    return lease;
  }

  @Override
  public boolean isExpired() {
    return deadline.expired();
  }

  @Override
  public CompletionStage<Void> done() {
    return done;
  }

  /** This session's lease, for the shell's {@code leases}. */
  io.etcfs.spi.lease.LeaseReport.Lease report() {
    return io.etcfs.spi.lease.LeaseReport.of("lock session", lease, ttl, deadline,
        keeper.lastAcknowledged());
  }

  /** Ends the session on purpose: its lease goes, and every lock key with it. */
  void close() {
    // A session past its deadline has nothing left to revoke that etcd would not expire itself,
    // and its node may be cut off from etcd: asking would only wait out the request timeout.
    boolean lapsed = deadline.expired();
    deadline.expire();
    keeper.stop();
    if (!lapsed) {
      revokeQuietly();
    }
    done.complete(null);
  }

  /** Stops renewing without revoking, as a crash would. */
  void halt() {
    keeper.stop();
  }

  private void revokeQuietly() {
    try {
      store.revokeLease(lease);
    } catch (MetaStoreException e) {
      // the lease runs out by itself within its TTL
    }
  }
}

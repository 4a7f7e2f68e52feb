package io.etcfs.spi.meta;

import java.time.Duration;
import java.util.Optional;
import org.osgi.annotation.versioning.ProviderType;

/**
 * The shared metadata store: ordered byte keys, a global revision that increases with every
 * change, compare-and-set transactions, leases and watches. It is shaped after etcd's v3 API
 * because etcd is what it runs on; the in-memory engine used by unit tests gives the same
 * guarantees in one process.
 *
 * <p>Every call is synchronous and bounded in time: a store that does not answer within the
 * implementation's request timeout fails with {@link MetaStoreException.Kind#UNAVAILABLE} rather
 * than blocking its caller for good (a FUSE callback must never hang).
 */
@ProviderType
public interface MetaStore {

  /** The value of one key, read linearizably. */
  Optional<KeyValue> get(byte[] key);

  /**
   * Keys in [{@code from}, {@code to}) in key order, at most {@code limit} of them (0: no limit),
   * all as of one revision. An empty {@code to} means "to the end of the keyspace".
   */
  RangeResult range(byte[] from, byte[] to, int limit);

  /** All keys starting with {@code prefix}, at most {@code limit} (0: no limit). */
  default RangeResult prefix(byte[] prefix, int limit) {
    return range(prefix, Keys.prefixEnd(prefix), limit);
  }

  /** Applies a transaction atomically. */
  TxnResult commit(Txn txn);

  /**
   * Watches every key starting with {@code prefix}, delivering changes from revision {@code
   * fromRevision} on (0: from now). Events arrive on a store thread, in revision order.
   */
  Watch watch(byte[] prefix, long fromRevision, WatchListener listener);

  /**
   * Grants a lease of at least {@code ttl} (a store may raise a short TTL: etcd grants no less
   * than about 2 s) and returns its id.
   */
  long grantLease(Duration ttl);

  /**
   * Renews a lease once and returns the TTL the store granted, in seconds. Fails with {@link
   * MetaStoreException.Kind#LEASE_NOT_FOUND} if the lease is gone. The caller keeps its own
   * deadline from the time it <em>sent</em> the renewal that was acknowledged.
   */
  long keepAliveOnce(long lease);

  /**
   * The seconds a lease has left as the store sees them, or -1 if it is gone (expired, revoked
   * or never granted). For people (the shell's {@code members}); a node's own liveness is decided
   * by its deadline, never by asking the store.
   *
   * @since 1.3
   */
  long leaseTimeToLive(long lease);

  /** Revokes a lease, deleting every key attached to it. A lease already gone is not an error. */
  void revokeLease(long lease);

  /** Where this store lives, for messages (for etcd: its endpoints). */
  String describe();
}

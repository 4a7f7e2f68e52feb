package io.etcfs.testing;

import io.etcfs.spi.meta.Compare;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.MetaStoreException;
import io.etcfs.spi.meta.MetaStoreException.Kind;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.RangeResult;
import io.etcfs.spi.meta.Txn;
import io.etcfs.spi.meta.TxnResult;
import io.etcfs.spi.meta.Watch;
import io.etcfs.spi.meta.WatchEvent;
import io.etcfs.spi.meta.WatchListener;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * An in-memory {@link MetaStore} with etcd's semantics: one global revision bumped by every change,
 * create/mod revisions and versions, equality compares (a value compare on an absent key fails,
 * as in etcd), leases whose TTL runs on an injectable clock, watches delivered in revision order
 * on one thread, and compaction. One lock serialises everything.
 */
public final class MemoryMetaStore implements MetaStore, AutoCloseable {
  static final Comparator<byte[]> KEY_ORDER = Arrays::compareUnsigned;

  /** etcd's default --max-txn-ops. */
  static final int MAX_TXN_OPS = 128;

  private final Object lock = new Object();
  private final NavigableMap<byte[], KeyValue> keys = new TreeMap<>(KEY_ORDER);
  private final MemoryLeases leases;
  private final MemoryWatches watches;
  private final ScheduledExecutorService thread;
  private long revision = 1;

  /** A store whose leases expire on the system clock. */
  public MemoryMetaStore() {
    this(Clock.systemUTC());
  }

  /** A store whose leases expire when {@code clock} passes their deadline. */
  public MemoryMetaStore(Clock clock) {
    this.thread = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "memory-meta-store");
      t.setDaemon(true);
      return t;
    });
    this.leases = new MemoryLeases(clock);
    this.watches = new MemoryWatches(thread);
    thread.scheduleWithFixedDelay(this::expireDueLeases, 100, 100, TimeUnit.MILLISECONDS);
  }

  @Override
  public Optional<KeyValue> get(byte[] key) {
    synchronized (lock) {
      return Optional.ofNullable(keys.get(key));
    }
  }

  @Override
  public RangeResult range(byte[] from, byte[] to, int limit) {
    synchronized (lock) {
      Map<byte[], KeyValue> slice = to.length == 0 ? keys.tailMap(from, true)
          : KEY_ORDER.compare(from, to) >= 0 ? Map.of()
          : keys.subMap(from, true, to, false);
      List<KeyValue> found = slice.values().stream()
          .limit(limit == 0 ? Long.MAX_VALUE : limit + 1L)
          .toList();
      boolean more = limit != 0 && found.size() > limit;
      return new RangeResult(more ? found.subList(0, limit) : found, revision, more);
    }
  }

  @Override
  public TxnResult commit(Txn txn) {
    checkSize(txn);
    synchronized (lock) {
      boolean succeeded = txn.compares().stream().allMatch(this::holds);
      List<Op> ops = succeeded ? txn.onSuccess() : txn.onFailure();
      checkOps(ops);
      List<List<KeyValue>> reads = apply(ops);
      List<RangeResult> ranges = new ArrayList<>();
      int i = 0;
      for (Op op : ops) {
        if (op instanceof Op.Range r) {
          List<KeyValue> found = reads.get(i++);
          boolean more = r.limit() != 0 && found.size() > r.limit();
          ranges.add(new RangeResult(more ? found.subList(0, r.limit()) : found, revision, more));
        }
      }
      return new TxnResult(succeeded, revision, ranges);
    }
  }

  @Override
  public Watch watch(byte[] prefix, long fromRevision, WatchListener listener) {
    synchronized (lock) {
      return watches.watch(prefix, fromRevision, listener);
    }
  }

  @Override
  public long grantLease(Duration ttl) {
    synchronized (lock) {
      return leases.grant(Math.max(1, (ttl.toMillis() + 999) / 1000));
    }
  }

  @Override
  public long keepAliveOnce(long lease) {
    synchronized (lock) {
      expireDueLeases();
      long ttl = leases.renew(lease);
      if (ttl < 0) {
        throw leaseNotFound(lease);
      }
      return ttl;
    }
  }

  @Override
  public long leaseTimeToLive(long lease) {
    synchronized (lock) {
      expireDueLeases();
      return leases.timeToLive(lease);
    }
  }

  @Override
  public void revokeLease(long lease) {
    synchronized (lock) {
      deleteKeysOf(lease);
    }
  }

  /** Ends a lease now, as if its TTL had run out, deleting its keys. */
  public void expireLease(long lease) {
    revokeLease(lease);
  }

  /** Expires every lease whose deadline the clock has passed (also runs every 100 ms). */
  public void expireDueLeases() {
    synchronized (lock) {
      leases.due().forEach(this::deleteKeysOf);
    }
  }

  /** The current store revision. */
  public long revision() {
    synchronized (lock) {
      return revision;
    }
  }

  /** Drops the history before {@code rev}: watches from an older revision fail COMPACTED. */
  public void compact(long rev) {
    synchronized (lock) {
      if (rev <= watches.compactedRevision()) {
        throw new MetaStoreException(Kind.COMPACTED, "memory store: revision " + rev
            + " is already compacted (up to " + watches.compactedRevision() + ")");
      }
      if (rev > revision) {
        throw new MetaStoreException(Kind.OTHER, "memory store: cannot compact the future"
            + " revision " + rev + " (current " + revision + ")");
      }
      watches.compact(rev);
    }
  }

  /**
   * Ends every running watch with a {@link Kind#COMPACTED} error, as etcd does to a watcher that
   * fell behind a compaction (or cancels on a leader change): each must re-list and start over.
   */
  public void cancelWatches() {
    synchronized (lock) {
      watches.failAll(new MetaStoreException(Kind.COMPACTED,
          "memory store cancelled its watches (test)"));
    }
  }

  /** Ends every running watch with an error of {@code kind}, as a lost connection does. */
  public void failWatches(Kind kind) {
    synchronized (lock) {
      watches.failAll(new MetaStoreException(kind, "memory store ended its watches (test)"));
    }
  }

  @Override
  public String describe() {
    return "memory store";
  }

  @Override
  public void close() {
    thread.shutdownNow();
  }

  private static void checkSize(Txn txn) {
    if (txn.compares().size() > MAX_TXN_OPS || txn.onSuccess().size() > MAX_TXN_OPS
        || txn.onFailure().size() > MAX_TXN_OPS) {
      throw new MetaStoreException(Kind.TOO_LARGE,
          "memory store: too many operations in txn request (limit " + MAX_TXN_OPS + ")");
    }
  }

  private boolean holds(Compare c) {
    KeyValue kv = keys.get(c.key());
    long created = kv == null ? 0 : kv.createRevision();
    long modified = kv == null ? 0 : kv.modRevision();
    return switch (c.target()) {
      case CREATE_REVISION -> created == c.expected();
      case CREATE_REVISION_LESS -> created < c.expected();
      case CREATE_REVISION_GREATER -> created > c.expected();
      case MOD_REVISION -> modified == c.expected();
      case MOD_REVISION_LESS -> modified < c.expected();
      case MOD_REVISION_GREATER -> modified > c.expected();
      case VERSION -> (kv == null ? 0 : kv.version()) == c.expected();
      // etcd fails every value compare of an absent key
      case VALUE -> kv != null && Arrays.equals(kv.value(), c.value());
      case VALUE_NOT -> kv != null && !Arrays.equals(kv.value(), c.value());
      case VALUE_LESS -> kv != null && Arrays.compareUnsigned(kv.value(), c.value()) < 0;
      case VALUE_GREATER -> kv != null && Arrays.compareUnsigned(kv.value(), c.value()) > 0;
    };
  }

  /** Rejects what etcd rejects before applying anything, so that a failed txn changes nothing. */
  private void checkOps(List<Op> ops) {
    Set<String> putKeys = new HashSet<>();
    for (Op op : ops) {
      if (op instanceof Op.Put put) {
        if (put.lease() != 0 && !leases.exists(put.lease())) {
          throw leaseNotFound(put.lease());
        }
        if (!putKeys.add(Arrays.toString(put.key())) || insideDelete(put.key(), ops)) {
          throw new MetaStoreException(Kind.OTHER, "memory store: duplicate key given in txn");
        }
      }
    }
  }

  /** etcd also rejects a put whose key one of the same branch's deletes covers. */
  private static boolean insideDelete(byte[] key, List<Op> ops) {
    for (Op op : ops) {
      if (op instanceof Op.Delete d) {
        boolean covered = d.rangeEnd() == null
            ? Arrays.equals(d.key(), key)
            : Arrays.compareUnsigned(key, d.key()) >= 0
                && (d.rangeEnd().length == 0 || Arrays.compareUnsigned(key, d.rangeEnd()) < 0);
        if (covered) {
          return true;
        }
      }
    }
    return false;
  }

  /** Applies the writes in order; returns each range read's keys (limit + 1 at most). */
  private List<List<KeyValue>> apply(List<Op> ops) {
    long next = revision + 1;
    List<WatchEvent> events = new ArrayList<>();
    List<List<KeyValue>> reads = new ArrayList<>();
    for (Op op : ops) {
      if (op instanceof Op.Put put) {
        events.add(put(put, next));
      } else if (op instanceof Op.Range r) {
        Map<byte[], KeyValue> slice = r.to().length == 0 ? keys.tailMap(r.from(), true)
            : KEY_ORDER.compare(r.from(), r.to()) >= 0 ? Map.of()
            : keys.subMap(r.from(), true, r.to(), false);
        reads.add(slice.values().stream()
            .limit(r.limit() == 0 ? Long.MAX_VALUE : r.limit() + 1L).toList());
      } else {
        events.addAll(delete((Op.Delete) op, next));
      }
    }
    publish(next, events);
    return reads;
  }

  private WatchEvent put(Op.Put put, long rev) {
    KeyValue old = keys.get(put.key());
    if (old != null && old.lease() != 0) {
      leases.detach(old.lease(), put.key());
    }
    KeyValue kv = new KeyValue(put.key(), put.value(), old == null ? rev : old.createRevision(),
        rev, old == null ? 1 : old.version() + 1, put.lease());
    keys.put(put.key(), kv);
    if (put.lease() != 0) {
      leases.attach(put.lease(), put.key());
    }
    return new WatchEvent(WatchEvent.Type.PUT, kv);
  }

  private List<WatchEvent> delete(Op.Delete delete, long rev) {
    List<byte[]> doomed = delete.rangeEnd() == null
        ? (keys.containsKey(delete.key()) ? List.of(delete.key()) : List.of())
        : List.copyOf(range(delete.key(), delete.rangeEnd(), 0).kvs().stream()
            .map(KeyValue::key).toList());
    List<WatchEvent> events = new ArrayList<>();
    for (byte[] key : doomed) {
      KeyValue old = keys.remove(key);
      if (old.lease() != 0) {
        leases.detach(old.lease(), key);
      }
      events.add(new WatchEvent(WatchEvent.Type.DELETE,
          new KeyValue(key, new byte[0], 0, rev, 0, 0)));
    }
    return events;
  }

  private void deleteKeysOf(long lease) {
    long next = revision + 1;
    List<WatchEvent> events = new ArrayList<>();
    for (byte[] key : leases.remove(lease)) {
      events.addAll(delete(new Op.Delete(key, null), next));
    }
    publish(next, events);
  }

  /** A revision is used only by a change: etcd does not bump it for a txn that wrote nothing. */
  private void publish(long rev, List<WatchEvent> events) {
    if (!events.isEmpty()) {
      revision = rev;
      watches.publish(rev, events);
    }
  }

  private static MetaStoreException leaseNotFound(long lease) {
    return new MetaStoreException(Kind.LEASE_NOT_FOUND,
        "memory store: lease " + Long.toHexString(lease) + " not found (expired or revoked)");
  }
}

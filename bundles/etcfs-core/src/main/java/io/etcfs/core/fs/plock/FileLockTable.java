package io.etcfs.core.fs.plock;

import io.etcfs.spi.fencing.Membership;
import io.etcfs.spi.meta.Compare;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.MetaStoreException;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.RangeResult;
import io.etcfs.spi.meta.Txn;
import io.etcfs.spi.meta.Watch;
import io.etcfs.spi.meta.WatchEvent;
import io.etcfs.spi.meta.WatchListener;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The lock keys of one inode (fcntl or flock) as one optimistic table: {@code <table>} is a
 * version key and {@code <table>/<node>/<owner>} the owners' keys, read together in one range.
 *
 * <p>A change compares the version key's mod revision (and the owner's own key, and the node's
 * generation) and rewrites the version key: any two changes of one inode's table therefore
 * serialise, which per-key compares could not give — two owners each adding a first key to an
 * empty table would both find their own key absent and both commit. A lock key that vanishes
 * with its node's lease does not touch the version key, and need not: a lock that goes away can
 * only turn a refusal into a grant, never the reverse, and waiters watch the whole table.
 *
 * <p>The version key carries no lease (it must outlive any one node) and is deleted by the change
 * that leaves the table empty, so an inode that nobody locks keeps no key. Reading it absent
 * later is safe: it is absent only while no owner key exists.
 */
final class FileLockTable {
  /** What one range read of a table saw. */
  record Snapshot(long revision, KeyValue version, KeyValue own, List<KeyValue> others) {}

  private final MetaStore store;
  private final Membership membership;
  private final NodeLease lease;

  FileLockTable(MetaStore store, Membership membership, NodeLease lease) {
    this.store = store;
    this.membership = membership;
    this.lease = lease;
  }

  static byte[] ownerKey(byte[] table, String node, long owner) {
    return Keys.of(new String(table, StandardCharsets.UTF_8) + "/" + node + "/" + hex(owner));
  }

  static byte[] nodePrefix(byte[] table, String node) {
    return Keys.of(new String(table, StandardCharsets.UTF_8) + "/" + node + "/");
  }

  Snapshot read(byte[] table, byte[] ownKey) {
    RangeResult r = store.prefix(table, 0);
    KeyValue version = null;
    KeyValue own = null;
    List<KeyValue> others = new ArrayList<>();
    for (KeyValue kv : r.kvs()) {
      byte[] key = kv.key();
      if (Arrays.equals(key, table)) {
        version = kv;
      } else if (Arrays.equals(key, ownKey)) {
        own = kv;
      } else {
        others.add(kv);
      }
    }
    return new Snapshot(r.revision(), version, own, others);
  }

  /**
   * Replaces the owner's value ({@code null}: deletes it) if nothing in the table changed since
   * {@code seen}; false if something did (read again and decide again).
   */
  boolean commit(byte[] table, byte[] ownKey, Snapshot seen, String value) {
    Txn txn = new Txn()
        .when(Compare.modRevision(table, seen.version() == null ? 0 : seen.version().modRevision()))
        .when(Compare.modRevision(ownKey, seen.own() == null ? 0 : seen.own().modRevision()))
        .when(Compare.createRevision(membership.memberKey(), membership.generation()));
    if (value == null && seen.others().isEmpty()) {
      txn.then(Op.delete(table));
    } else {
      txn.then(Op.put(table, Keys.of(Long.toString(seen.revision()))));
    }
    long id = 0;
    if (value == null) {
      txn.then(Op.delete(ownKey));
    } else {
      id = lease.current();
      txn.then(Op.put(ownKey, Keys.of(value), id));
    }
    try {
      return store.commit(txn).succeeded();
    } catch (MetaStoreException e) {
      if (e.kind() != MetaStoreException.Kind.LEASE_NOT_FOUND) {
        throw e;
      }
      lease.lost(id);
      return false;
    }
  }

  /**
   * Starts watching the table for any change after {@code revision} (a lock let go, a holder's
   * lease gone); the caller waits on the result and closes it.
   */
  Change watch(byte[] table, long revision) {
    return new Change(store, table, revision);
  }

  /** A watch of one table that counts down once anything in it changed or the watch ended. */
  static final class Change implements AutoCloseable {
    private final CountDownLatch changed = new CountDownLatch(1);
    private final Watch watch;

    private Change(MetaStore store, byte[] table, long revision) {
      this.watch = store.watch(table, revision + 1, new WatchListener() {
        @Override
        public void onEvents(List<WatchEvent> events) {
          changed.countDown();
        }

        @Override
        public void onError(MetaStoreException error) {
          // compacted or broken: the caller reads the table again either way
          changed.countDown();
        }
      });
    }

    /** Whether the table changed within {@code nanos}. */
    boolean await(long nanos) throws InterruptedException {
      return changed.await(nanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void close() {
      watch.close();
    }
  }

  static String hex(long v) {
    String s = Long.toHexString(v);
    return "0".repeat(16 - s.length()) + s;
  }
}

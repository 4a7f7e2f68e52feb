package io.etcfs.lock.etcd.internal;

import static io.etcfs.lock.etcd.internal.LockKeys.mode;
import static io.etcfs.lock.etcd.internal.LockKeys.str;

import io.etcfs.spi.lock.HeldLock;
import io.etcfs.spi.lock.LockMode;
import io.etcfs.spi.lock.LockTimeoutException;
import io.etcfs.spi.meta.Compare;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.MetaStoreException;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.RangeResult;
import io.etcfs.spi.meta.Txn;
import io.etcfs.spi.meta.TxnResult;
import java.lang.System.Logger.Level;
import java.lang.System.Logger;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The queue protocol of {@link EtcdLockService#acquire}: this session's request put and its
 * inode's queue read in one transaction, then, woken by the watch, the queue read again until
 * the request is first in line for its mode ({@link #granted}); a request that waits a while is
 * rewritten, one that times out is withdrawn. One request at a time per inode on this node: the
 * others wait at the inode's gate.
 */
final class LockQueue {
  private static final Logger LOG = System.getLogger(EtcdLockService.class.getName());
  /** A waiter repeats its request after this long without a change of its inode's queue. */
  private static final long NUDGE_NANOS = TimeUnit.SECONDS.toNanos(2);

  private final MetaStore store;
  private final LockKeys codec;
  private final NodeLocks locks;
  private final Map<Long, Held> held;
  private final Map<Long, InodeState> inodes;
  private final LockWatch watch;
  private final Recalls recalls;
  private final Releases releases;

  LockQueue(MetaStore store, LockKeys codec, NodeLocks locks, LockWatch watch, Recalls recalls,
      Releases releases) {
    this.store = store;
    this.codec = codec;
    this.locks = locks;
    this.held = locks.held;
    this.inodes = locks.inodes;
    this.watch = watch;
    this.recalls = recalls;
    this.releases = releases;
  }

  HeldLock acquire(long inode, LockMode mode, Duration timeout)
      throws LockTimeoutException {
    long deadline = System.nanoTime() + timeout.toNanos();
    InodeState gate = inodes.compute(inode, (i, st) -> {
      InodeState state = st == null ? new InodeState() : st;
      state.users++;
      return state;
    });
    try {
      return acquire(gate, inode, mode, deadline);
    } finally {
      inodes.computeIfPresent(inode, (i, st) -> --st.users == 0 && !held.containsKey(i)
          ? null : st);
    }
  }

  /** One request at a time per inode on this node: the others wait at the gate. */
  private HeldLock acquire(InodeState gate, long inode, LockMode mode, long deadline)
      throws LockTimeoutException {
    synchronized (gate) {
      awaitPrefetch(gate, inode, deadline);
      while (true) {
        locks.checkOpen();
        Session s = locks.session();
        Held h = held.get(inode);
        if (h != null && h.releasing) {
          awaitGone(h, deadline);
          continue;
        }
        if (h != null && h.demoting && mode == LockMode.EXCLUSIVE) {
          awaitDemoted(h, deadline); // then upgrade, or held exclusively as before
          continue;
        }
        if (h != null && h.session == s && !s.isExpired()) {
          if (h.lock.mode() == LockMode.EXCLUSIVE || mode == LockMode.SHARED) {
            h.lastUsed = System.nanoTime();
            return h.lock;
          }
          releases.release(h.lock); // an upgrade queues again, behind whoever is waiting
        }
        HeldLock granted;
        try {
          granted = queueAndWait(gate, s, inode, mode, deadline);
        } finally {
          gate.waiting = null;
        }
        if (granted != null) {
          return granted;
        }
        // The session ended while waiting: start over under a new one.
      }
    }
  }

  /** Waits (holding the gate) until a prefetch that owns the inode's request is done with it. */
  private static void awaitPrefetch(InodeState gate, long inode, long deadline)
      throws LockTimeoutException {
    while (gate.prefetching) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        throw new LockTimeoutException("lock on inode " + Long.toHexString(inode)
            + " is still being prefetched");
      }
      try {
        TimeUnit.NANOSECONDS.timedWait(gate, left);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new LockTimeoutException("interrupted");
      }
    }
  }

  /** Puts this session's key for {@code inode} and waits for the grant; null if the key went. */
  private HeldLock queueAndWait(InodeState gate, Session s, long inode, LockMode mode,
      long deadline)
      throws LockTimeoutException {
    byte[] key = codec.key(inode, s.lease);
    byte[] value = codec.value(mode);
    // The queue is read in the same transaction as the request: one round trip when uncontended.
    // A key left by an earlier request of this session (its withdrawal failed) is replaced, so
    // that every request queues at the back.
    Txn request = new Txn()
        .when(Compare.absent(key))
        .then(Op.put(key, value, s.lease))
        .then(Op.rangePrefix(codec.inode(inode)))
        .otherwise(Op.delete(key));
    TxnResult put = store.commit(request);
    if (!put.succeeded()) {
      put = store.commit(request);
      if (!put.succeeded()) {
        throw new IllegalStateException("lock key " + str(key) + " keeps coming back");
      }
    }
    long token = put.revision();
    gate.requestToken = token;
    gate.waitingSince = System.nanoTime();
    gate.waiting = mode;
    RangeResult queue = put.ranges().get(0);
    long firstEpoch = watch.restarts();
    while (true) {
      long epoch = watch.restarts();
      List<KeyValue> keys = new ArrayList<>(queue.kvs());
      keys.sort(Comparator.comparingLong(KeyValue::createRevision));
      KeyValue mine = keys.stream().filter(kv -> kv.keyString().equals(str(key)))
          .findFirst().orElse(null);
      if (mine == null || s.isExpired()) {
        return null;
      }
      if (granted(keys, mine, mode)) {
        HeldLock lock = new HeldLock(inode, mode, mine.createRevision(), s.lease,
            grantRevision(gate, token, queue, firstEpoch));
        Held h = new Held(lock, s);
        held.put(inode, h);
        recalls.recallIfWanted(h, keys);
        if (gate.lastEvent.get() > queue.revision() || watch.restarts() != epoch) {
          // A request newer than the read above may have been seen by the watch before this
          // grant was recorded (the watch then had no holder to recall): look again.
          recalls.recallIfWanted(h, store.prefix(codec.inode(inode), 0).kvs());
        }
        return lock;
      }
      long round = Math.min(deadline, System.nanoTime() + NUDGE_NANOS);
      if (!awaitChange(gate, queue.revision(), epoch, round)) {
        if (System.nanoTime() - deadline >= 0) {
          releases.abandon(key, token);
          LOG.log(Level.WARNING, "lock {0} on inode {1} not granted in time (held by {2})",
              mode, Long.toHexString(inode), holders(keys, mine));
          throw new LockTimeoutException("lock " + mode + " on inode "
              + Long.toHexString(inode) + " not granted in time (held by "
              + holders(keys, mine) + ")");
        }
        nudge(key, value, s.lease, token);
      }
      queue = store.prefix(codec.inode(inode), 0);
    }
  }

  /**
   * The revision a new holder's caches must reach to show what earlier holders committed: they
   * committed before they deleted their keys, and those deletes are changes of this inode's queue
   * that the watch showed (or preceded this request's own put). Both are changes under the
   * filesystem's prefix, which a watch on it is sure to deliver. Only if the watch restarted
   * meanwhile (and may have missed the delete) is it the queue read's own revision, which may
   * belong to a change elsewhere in etcd.
   */
  private long grantRevision(InodeState gate, long token, RangeResult queue, long firstEpoch) {
    if (watch.restarts() != firstEpoch) {
      return queue.revision();
    }
    return Math.max(token, Math.min(gate.lastEvent.get(), queue.revision()));
  }

  /**
   * Rewrites a request that has waited a while (same key, same queue position): the holders see
   * it again and are recalled again, should an earlier recall have been lost.
   */
  private void nudge(byte[] key, byte[] value, long lease, long token) {
    try {
      store.commit(new Txn().when(Compare.createRevision(key, token))
          .then(Op.put(key, value, lease)));
    } catch (MetaStoreException e) {
      LOG.log(Level.DEBUG, "could not repeat lock request {0}: {1}", str(key), e.getMessage());
    }
  }

  /** Waits until a lock being recalled has been given back (its handler is flushing). */
  private void awaitGone(Held h, long deadline) throws LockTimeoutException {
    if (!locks.waitFor(() -> held.get(h.lock.inode()) != h, deadline)) {
      throw new LockTimeoutException(Thread.currentThread().isInterrupted() ? "interrupted"
          : "lock on inode " + Long.toHexString(h.lock.inode()) + " is still being given back");
    }
  }

  /** Waits until the change of {@code h} to a shared lock applied or was given up. */
  private void awaitDemoted(Held h, long deadline) throws LockTimeoutException {
    if (!locks.waitFor(() -> held.get(h.lock.inode()) != h || !h.demoting, deadline)) {
      throw new LockTimeoutException(Thread.currentThread().isInterrupted() ? "interrupted"
          : "lock on inode " + Long.toHexString(h.lock.inode()) + " is still being made shared");
    }
  }

  /**
   * Whether {@code mine} is granted in {@code queue} (sorted by create revision): an exclusive
   * request when no key precedes it, a shared one when only shared keys do.
   */
  static boolean granted(List<KeyValue> queue, KeyValue mine, LockMode mode) {
    for (KeyValue kv : queue) {
      if (kv.createRevision() >= mine.createRevision()) {
        return true;
      }
      if (mode == LockMode.EXCLUSIVE || mode(kv) == LockMode.EXCLUSIVE) {
        return false;
      }
    }
    return true;
  }

  private static String holders(List<KeyValue> queue, KeyValue mine) {
    List<String> ahead = new ArrayList<>();
    for (KeyValue kv : queue) {
      if (kv.createRevision() < mine.createRevision()) {
        ahead.add(kv.valueString());
      }
    }
    return String.join(", ", ahead);
  }

  /**
   * Waits until the watch shows a change of the inode's queue newer than {@code revision}, or
   * restarted (it may have missed one).
   */
  private boolean awaitChange(InodeState gate, long revision, long epoch, long deadline) {
    return locks.waitFor(() -> gate.lastEvent.get() > revision || watch.restarts() != epoch,
        deadline);
  }
}

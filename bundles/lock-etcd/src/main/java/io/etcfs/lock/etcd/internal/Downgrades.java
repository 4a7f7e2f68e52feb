package io.etcfs.lock.etcd.internal;

import static io.etcfs.lock.etcd.internal.LockKeys.mode;
import static io.etcfs.lock.etcd.internal.LockKeys.str;

import io.etcfs.spi.lock.HeldLock;
import io.etcfs.spi.lock.LockMode;
import io.etcfs.spi.lock.RecallHandler;
import io.etcfs.spi.meta.Compare;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.MetaStoreException;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.Txn;
import io.etcfs.spi.meta.TxnResult;
import java.lang.System.Logger.Level;
import java.lang.System.Logger;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Clean exclusive locks made shared in place, for an idle give-back ({@link IdleRelease}): the
 * claim, the core's agreement, the rewrite of the keys in etcd, what the core and the table are
 * told after, or the lock kept exclusive if the change did not apply; and the count of changes
 * made.
 */
final class Downgrades {
  private static final Logger LOG = System.getLogger(EtcdLockService.class.getName());

  private final MetaStore store;
  private final LockKeys codec;
  private final LockView table;
  private final NodeLocks locks;
  private final Map<Long, Held> held;
  private final Recalls recalls;
  /** Exclusive locks made shared in place ({@link #downgrade}). */
  private final AtomicLong downgrades = new AtomicLong();

  Downgrades(MetaStore store, LockKeys codec, LockView table, NodeLocks locks, Recalls recalls) {
    this.store = store;
    this.codec = codec;
    this.table = table;
    this.locks = locks;
    this.held = locks.held;
    this.recalls = recalls;
  }

  /**
   * Marks a claimed lock to be made shared if it is exclusive and clean (the core's hint); the
   * core's agreement ({@link #downgrading(Held)}) is what makes it safe.
   */
  boolean claimDemote(Held h) {
    synchronized (h) {
      if (h.lock.mode() != LockMode.EXCLUSIVE || !h.clean) {
        return false;
      }
      h.demoting = true;
      return true;
    }
  }

  /** Whether the core agrees to keep {@code h} shared (it has nothing of the file buffered). */
  boolean downgrading(Held h) {
    RecallHandler handler = recalls.handler();
    try {
      return handler != null && handler.downgrading(h.lock);
    } catch (RuntimeException e) {
      LOG.log(Level.ERROR, "recall handler failed for inode " + Long.toHexString(h.lock.inode())
          + " before a downgrade; giving the lock back instead", e);
      return false;
    }
  }

  /**
   * Makes the claimed clean exclusive locks {@code demoting} shared in place: each key rewritten
   * {@code "S <node>"} under the compares of its create revision and of its exclusive value, in
   * one transaction (each alone if that fails, or if its outcome is unknown: a key already
   * shared then fails its compare, and is read back). The key keeps its place at the head of its
   * queue and its create revision, the fencing token: shared requests behind it are granted as
   * the watch shows the change. The core agreed first, with nothing buffered, and buffers nothing
   * more under the exclusive lock from then on, so readers elsewhere wait for nothing.
   *
   * @return the locks whose change did not apply, still held exclusively
   */
  List<Held> downgrade(List<Held> demoting) {
    if (demoting.isEmpty()) {
      return List.of();
    }
    TxnResult r = null;
    try {
      r = store.commit(demoteTxn(demoting));
    } catch (MetaStoreException e) {
      LOG.log(Level.DEBUG, "downgrade of {0} locks: {1}", demoting.size(), e.getMessage());
    }
    if (r != null && r.succeeded()) {
      demoting.forEach(this::demoted);
      return List.of();
    }
    List<Held> kept = new ArrayList<>();
    for (Held h : demoting) {
      if (demotedAlone(h)) {
        demoted(h);
      } else {
        kept.add(h);
      }
    }
    return kept;
  }

  private Txn demoteTxn(List<Held> demoting) {
    Txn t = new Txn();
    for (Held h : demoting) {
      byte[] key = codec.key(h.lock.inode(), h.lock.sessionId());
      t.when(Compare.createRevision(key, h.lock.fencingToken()))
          .when(Compare.value(key, codec.value(LockMode.EXCLUSIVE)))
          .then(Op.put(key, codec.value(LockMode.SHARED), h.lock.sessionId()));
    }
    return t;
  }

  /** One lock's change alone; if its compares fail, whether the key is shared already. */
  private boolean demotedAlone(Held h) {
    byte[] key = codec.key(h.lock.inode(), h.lock.sessionId());
    try {
      if (store.commit(demoteTxn(List.of(h))).succeeded()) {
        return true;
      }
      for (KeyValue kv : store.prefix(key, 1).kvs()) {
        if (kv.keyString().equals(str(key)) && kv.createRevision() == h.lock.fencingToken()
            && mode(kv) == LockMode.SHARED) {
          return true; // an earlier attempt applied after all
        }
      }
    } catch (MetaStoreException e) {
      LOG.log(Level.DEBUG, "downgrade of lock {0}: {1}", str(key), e.getMessage());
    }
    return false;
  }

  /**
   * Records {@code h} as the shared lock it now is, and tells the core; a conflicting request
   * the watch showed meanwhile (its recall found {@code h} being changed) recalls it now.
   */
  private void demoted(Held h) {
    long inode = h.lock.inode();
    HeldLock shared = new HeldLock(inode, LockMode.SHARED, h.lock.fencingToken(),
        h.lock.sessionId(), h.lock.grantRevision());
    Held now = new Held(shared, h.session);
    LockView.Request wanted;
    synchronized (table) {
      if (!held.replace(inode, h, now)) {
        return; // its session ended meanwhile: nothing is held
      }
      wanted = table.firstConflict(inode, shared.fencingToken(), LockMode.SHARED);
    }
    downgrades.incrementAndGet();
    tellDowngraded(h.lock, shared);
    locks.wakeAll();
    if (wanted != null) {
      now.waiters.add(wanted.createRevision());
      recalls.recall(now, wanted.mode());
    }
  }

  /** A claimed lock whose change did not apply: held exclusively as before. */
  void keep(Held h) {
    synchronized (h) {
      h.demoting = false;
      h.releasing = false;
      h.batched = false;
      h.recalling = false;
      h.idleOnly = false;
      h.lastUsed = System.nanoTime(); // not again at once
    }
    tellDowngraded(h.lock, h.lock);
    locks.wakeAll();
    LockView.Request wanted = table.firstConflict(h.lock.inode(), h.lock.fencingToken(),
        LockMode.EXCLUSIVE);
    if (wanted != null) {
      recalls.recall(h, wanted.mode());
    }
  }

  private void tellDowngraded(HeldLock from, HeldLock to) {
    RecallHandler handler = recalls.handler();
    try {
      if (handler != null) {
        handler.downgraded(from, to);
      }
    } catch (RuntimeException e) {
      LOG.log(Level.ERROR, "recall handler failed for inode " + Long.toHexString(from.inode())
          + " after a downgrade", e);
    }
  }

  /** Exclusive locks this node has made shared in place since it started. */
  long count() {
    return downgrades.get();
  }
}

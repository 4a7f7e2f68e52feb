package io.etcfs.lock.etcd.internal;

import static io.etcfs.lock.etcd.internal.LockKeys.str;

import io.etcfs.spi.lock.HeldLock;
import io.etcfs.spi.lock.LockMode;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.MetaStoreException;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.Txn;
import io.etcfs.spi.meta.TxnResult;
import java.lang.System.Logger.Level;
import java.lang.System.Logger;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Shared locks on many inodes nobody writes, in one transaction ({@link #prefetchShared}): the
 * queue protocol of {@link LockQueue} for a batch of inodes at once, withdrawing what is not
 * granted at once instead of waiting.
 */
final class Prefetch {
  private static final Logger LOG = System.getLogger(EtcdLockService.class.getName());
  /**
   * The most inodes one {@link #prefetchShared} asks for: two operations each, and etcd's
   * default limit is 128 operations per transaction ({@code --max-txn-ops}).
   */
  static final int PREFETCH_MAX = 64;

  private final MetaStore store;
  private final LockKeys codec;
  private final LockView table;
  private final NodeLocks locks;
  private final Map<Long, Held> held;
  private final Map<Long, InodeState> inodes;
  private final Recalls recalls;

  Prefetch(MetaStore store, LockKeys codec, LockView table, NodeLocks locks, Recalls recalls) {
    this.store = store;
    this.codec = codec;
    this.table = table;
    this.locks = locks;
    this.held = locks.held;
    this.inodes = locks.inodes;
    this.recalls = recalls;
  }

  /**
   * One transaction for every candidate: this session's shared request put and the inode's
   * queue read back, as {@link LockQueue} does for one inode. Candidates are inodes with no
   * gate here (neither held nor being acquired; their gates are claimed until this is done, so
   * an acquire arriving meanwhile waits for it) and no exclusive request in the lock table. A
   * request the queue shows behind an exclusive one after all (the table trailed etcd) is
   * withdrawn at once; its holder may have seen it and give the lock back once, which is the
   * whole cost of that race. A granted request is recorded as {@link CreateGrants#adoptCreated}
   * records a created lock: under the table's monitor, so any conflicting request the watch
   * shows recalls it.
   */
  List<HeldLock> prefetchShared(Collection<Long> candidates) {
    locks.checkOpen();
    Session s = locks.session();
    Map<Long, InodeState> claimed = new LinkedHashMap<>();
    for (long inode : candidates) {
      if (claimed.size() == PREFETCH_MAX) {
        break;
      }
      if (held.containsKey(inode) || table.hasExclusive(inode)) {
        continue;
      }
      InodeState fresh = new InodeState();
      fresh.users = 1;
      fresh.prefetching = true;
      if (inodes.putIfAbsent(inode, fresh) == null) {
        claimed.put(inode, fresh);
      }
    }
    if (claimed.isEmpty()) {
      return List.of();
    }
    List<HeldLock> granted = new ArrayList<>();
    try {
      Txn request = new Txn();
      for (long inode : claimed.keySet()) {
        request.then(Op.put(codec.key(inode, s.lease), codec.value(LockMode.SHARED), s.lease))
            .then(Op.rangePrefix(codec.inode(inode)));
      }
      TxnResult put;
      try {
        put = store.commit(request);
      } catch (MetaStoreException e) {
        withdraw(s, claimed.keySet(), "of a prefetch whose outcome is unknown (" + e.getMessage()
            + ")");
        throw e;
      }
      List<Long> behind = new ArrayList<>();
      int i = 0;
      for (long inode : claimed.keySet()) {
        List<KeyValue> keys = new ArrayList<>(put.ranges().get(i++).kvs());
        keys.sort(Comparator.comparingLong(KeyValue::createRevision));
        String mine = str(codec.key(inode, s.lease));
        KeyValue kv = keys.stream().filter(k -> k.keyString().equals(mine)).findFirst()
            .orElse(null);
        if (kv == null) {
          continue; // the session's lease ended: the key went with it
        }
        if (!LockQueue.granted(keys, kv, LockMode.SHARED)) {
          behind.add(inode);
          continue;
        }
        // The transaction's revision: every exclusive holder before this request had gone,
        // having committed first, by then.
        HeldLock lock = new HeldLock(inode, LockMode.SHARED, kv.createRevision(), s.lease,
            put.revision());
        Held h = new Held(lock, s);
        LockView.Request wanted;
        synchronized (table) {
          held.put(inode, h);
          wanted = table.firstConflict(inode, kv.createRevision(), LockMode.SHARED);
        }
        granted.add(lock);
        if (wanted != null) {
          h.waiters.add(wanted.createRevision());
          recalls.recall(h, wanted.mode());
        } else {
          recalls.recallIfWanted(h, keys);
        }
      }
      if (s.isExpired() || locks.current() != s) {
        granted.forEach(l -> held.remove(l.inode()));
        return List.of(); // sessionEnded may have missed these: nothing is held
      }
      if (!behind.isEmpty()) {
        withdraw(s, behind, "queued behind an exclusive lock");
      }
      return granted;
    } finally {
      claimed.forEach((inode, gate) -> {
        synchronized (gate) {
          gate.prefetching = false;
          gate.notifyAll();
        }
        inodes.computeIfPresent(inode, (n, st) -> --st.users == 0 && !held.containsKey(n)
            ? null : st);
      });
    }
  }

  /** Deletes prefetch requests this node does not hold, in one transaction (best effort). */
  private void withdraw(Session s, Collection<Long> inodes, String why) {
    Txn delete = new Txn();
    inodes.forEach(inode -> delete.then(Op.delete(codec.key(inode, s.lease))));
    try {
      store.commit(delete);
    } catch (MetaStoreException e) {
      LOG.log(Level.WARNING, "could not withdraw {0} shared lock requests {1}: {2}; they go"
          + " with lock session {3}, or when another node asks", inodes.size(), why,
          e.getMessage(), Long.toHexString(s.lease));
    }
  }
}

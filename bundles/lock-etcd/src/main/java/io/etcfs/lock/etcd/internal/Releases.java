package io.etcfs.lock.etcd.internal;

import static io.etcfs.lock.etcd.internal.LockKeys.str;

import io.etcfs.spi.lock.HeldLock;
import io.etcfs.spi.meta.Compare;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.MetaStoreException;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.Txn;
import io.etcfs.spi.meta.TxnResult;
import java.lang.System.Logger.Level;
import java.lang.System.Logger;
import java.util.List;
import java.util.Map;

/**
 * Deleting this node's lock keys: a lock released ({@link #release}), idle locks given back
 * together ({@link #giveBack}), a request given up ({@link #abandon}). Keeps, per inode, the
 * revision of the last release, which {@link LockWatch#writerElsewhere} compares with the
 * watch's.
 */
final class Releases {
  private static final Logger LOG = System.getLogger(EtcdLockService.class.getName());

  private final MetaStore store;
  private final LockKeys codec;
  private final NodeLocks locks;
  private final Map<Long, Held> held;
  private final Map<Long, InodeState> inodes;
  /**
   * Per inode, the revision at which this node last gave its lock back (the most recent 4096
   * inodes). Whatever request made it give the lock back is older, so until the watch has shown
   * that revision the table may not show that request yet: {@link LockWatch#writerElsewhere}
   * says a writer waits.
   */
  private final Recent releasedAt = new Recent(4096);

  Releases(MetaStore store, LockKeys codec, NodeLocks locks) {
    this.store = store;
    this.codec = codec;
    this.locks = locks;
    this.held = locks.held;
    this.inodes = locks.inodes;
  }

  /** The revision at which this node last gave back its lock on {@code inode}, or 0. */
  long releasedAt(long inode) {
    return releasedAt.get(inode, 0);
  }

  void release(HeldLock lock) {
    Held h = held.get(lock.inode());
    if (h == null || !h.lock.equals(lock) || h.batched || !held.remove(lock.inode(), h)) {
      return; // gone already, or its give-back's batch deletes it (see giveBack)
    }
    inodes.computeIfPresent(lock.inode(), (i, st) -> st.users == 0 ? null : st);
    locks.wakeAll();
    // Before the delete: the node waiting for this lock may be granted, and its write()
    // return, before this commit's answer is back here.
    releasedAt.put(lock.inode(), Long.MAX_VALUE);
    deleteKey(lock);
  }

  /** Deletes the key of a lock no longer held here, under the compare of its fencing token. */
  private void deleteKey(HeldLock lock) {
    byte[] key = codec.key(lock.inode(), lock.sessionId());
    try {
      long at = store.commit(new Txn().when(Compare.createRevision(key, lock.fencingToken()))
          .then(Op.delete(key))).revision();
      releasedAt.put(lock.inode(), at);
    } catch (MetaStoreException e) {
      releasedAt.remove(lock.inode());
      // The key goes with the session's lease at the latest.
      LOG.log(Level.WARNING, "could not release lock {0}: {1}", str(key), e.getMessage());
    }
  }

  /**
   * Releases {@code going} as {@link #release} releases one lock, with one transaction for all:
   * each key deleted under the compare of its fencing token. If any compare fails (a session
   * ended, a key went), nothing of that transaction applied, and each key is released alone.
   */
  void giveBack(List<Held> going) {
    Txn delete = new Txn();
    for (Held h : going) {
      held.remove(h.lock.inode(), h);
      inodes.computeIfPresent(h.lock.inode(), (i, st) -> st.users == 0 ? null : st);
      // Before the delete, as in release: a waiter elsewhere may be granted before it answers.
      releasedAt.put(h.lock.inode(), Long.MAX_VALUE);
      byte[] key = codec.key(h.lock.inode(), h.lock.sessionId());
      delete.when(Compare.createRevision(key, h.lock.fencingToken())).then(Op.delete(key));
    }
    locks.wakeAll();
    try {
      TxnResult r = store.commit(delete);
      if (r.succeeded()) {
        going.forEach(h -> releasedAt.put(h.lock.inode(), r.revision()));
        return;
      }
    } catch (MetaStoreException e) {
      LOG.log(Level.WARNING, "could not give back {0} idle locks in one transaction: {1};"
          + " releasing them one by one", going.size(), e.getMessage());
    }
    going.forEach(h -> deleteKey(h.lock));
  }

  /** Gives up a place in the queue (a timed-out request), unless it was granted meanwhile. */
  void abandon(byte[] key, long token) {
    try {
      store.commit(new Txn().when(Compare.createRevision(key, token)).then(Op.delete(key)));
    } catch (MetaStoreException e) {
      LOG.log(Level.WARNING, "could not withdraw lock request {0}: {1}", str(key),
          e.getMessage());
    }
  }
}

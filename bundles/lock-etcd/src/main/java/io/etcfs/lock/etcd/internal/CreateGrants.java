package io.etcfs.lock.etcd.internal;

import static io.etcfs.lock.etcd.internal.LockKeys.str;

import io.etcfs.spi.lock.CreateGrant;
import io.etcfs.spi.lock.HeldLock;
import io.etcfs.spi.lock.LockMode;
import io.etcfs.spi.meta.Compare;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.MetaStoreException;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.Txn;
import java.lang.System.Logger.Level;
import java.lang.System.Logger;
import java.util.List;
import java.util.Map;

/**
 * Exclusive locks granted by the transaction that creates their inode: the key that
 * transaction puts ({@link #createGrant}), the lock recorded as held once it committed ({@link
 * #adoptCreated}), or the key removed when its outcome is unknown ({@link #abandonCreated}).
 */
final class CreateGrants {
  private static final Logger LOG = System.getLogger(EtcdLockService.class.getName());

  private final MetaStore store;
  private final LockKeys codec;
  private final LockView table;
  private final NodeLocks locks;
  private final Map<Long, Held> held;
  private final Map<Long, InodeState> inodes;
  private final Recalls recalls;

  CreateGrants(MetaStore store, LockKeys codec, LockView table, NodeLocks locks,
      Recalls recalls) {
    this.store = store;
    this.codec = codec;
    this.table = table;
    this.locks = locks;
    this.held = locks.held;
    this.inodes = locks.inodes;
    this.recalls = recalls;
  }

  /**
   * The lock key {@code "X <node>"} under this session's lease, put by the transaction that
   * creates the inode: its create revision, that transaction's, is the fencing token, and
   * every node's watch sees it as it sees any request. Nobody can have queued for an inode that
   * did not exist, so the key is first in line: granted. The absent-compare makes that create
   * revision provably the transaction's own.
   */
  CreateGrant createGrant(long inode) {
    locks.checkOpen();
    Session s = locks.session();
    byte[] key = codec.key(inode, s.lease);
    return new CreateGrant(inode, s.lease, List.of(Compare.absent(key)),
        List.of(Op.put(key, codec.value(LockMode.EXCLUSIVE), s.lease)));
  }

  /**
   * Records the created lock as held, as {@link LockQueue} records a grant. If the session
   * the key was put under is no longer this node's live session, the key went (or goes) with
   * that session's lease, and nothing is held.
   */
  HeldLock adoptCreated(CreateGrant grant, long revision) {
    long inode = grant.inode();
    Session s = locks.current();
    if (locks.closed() || s == null || s.lease != grant.sessionId() || s.isExpired()) {
      return null;
    }
    HeldLock lock = new HeldLock(inode, LockMode.EXCLUSIVE, revision, s.lease, revision);
    Held h = new Held(lock, s);
    inodes.computeIfAbsent(inode, i -> new InodeState());
    LockView.Request wanted;
    // Under the table's monitor: a request the watch shows from here on finds the lock held and
    // recalls it; one it showed before is in the table now.
    synchronized (table) {
      held.put(inode, h);
      wanted = table.firstConflict(inode, revision, LockMode.EXCLUSIVE);
    }
    if (s.isExpired() || locks.current() != s) {
      // The session ended while the lock was being recorded: sessionEnded may have missed it.
      held.remove(inode, h);
      inodes.computeIfPresent(inode, (i, st) -> st.users == 0 ? null : st);
      return null;
    }
    if (wanted != null) {
      h.waiters.add(wanted.createRevision());
      recalls.recall(h, wanted.mode());
    }
    return lock;
  }

  /** Deletes the key the grant may have put; it goes with the session's lease otherwise. */
  void abandonCreated(CreateGrant grant) {
    Held h = held.get(grant.inode());
    if (h != null && h.lock.sessionId() == grant.sessionId()) {
      return; // adopted or acquired since: the key is that lock's
    }
    byte[] key = codec.key(grant.inode(), grant.sessionId());
    try {
      store.commit(new Txn().then(Op.delete(key)));
    } catch (MetaStoreException e) {
      LOG.log(Level.WARNING, "could not remove lock key {0} of a create whose outcome is"
          + " unknown ({1}); it goes with lock session {2}", str(key), e.getMessage(),
          Long.toHexString(grant.sessionId()));
    }
  }
}

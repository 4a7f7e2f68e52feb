package io.etcfs.core.fs;

import io.etcfs.core.fs.tx.MetaTx;
import io.etcfs.spi.fs.InodeFence;
import io.etcfs.spi.lock.HeldLock;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * This node's side of the inode fences (spi.fs {@link InodeFence}; DESIGN invariant 4): what
 * keeps a commit made under a lost lock from applying, whatever lock backend granted it.
 *
 * <p>Per exclusive grant, one {@link Fence}. It is <em>raised</em> — the record put naming this
 * grant — before anything is buffered under the grant ({@link #dirty}), by the first commit
 * under it ({@link #commit}), or by the transaction that creates the inode ({@link #forCreate}).
 * Every commit under the grant reads the record in its transaction, so the commit compares it,
 * and goes on only if it names this grant. So a holder that lost its lock commits nothing once
 * another holder raised, and two holders' commits are ordered by their raises. A raise is
 * followed by the cache reaching its revision: whatever any earlier holder committed before it
 * (a late commit of one whose lock lapsed included) is in this node's view before anything is
 * buffered on top of it; anything after it fails.
 */
final class Fences {
  /** One exclusive grant's fence. */
  static final class Fence {
    final HeldLock lock;
    final InodeFence mine;
    volatile boolean raised;
    /** As far as this node knows, the record declares this grant clean. */
    volatile boolean clean;
    /** The backend is making the lock shared in place: nothing more is buffered under it. */
    volatile boolean demoting;
    /** A commit found another holder's fence: nothing more is buffered or committed under it. */
    volatile boolean lost;
    /**
     * The filesystem record's revision when the lock was granted: the backends it came from. A
     * grant from before a switch commits nothing after this node followed it (issue #15).
     */
    final long strategy;

    Fence(HeldLock lock, InodeFence mine, boolean raised, long strategy) {
      this.lock = lock;
      this.mine = mine;
      this.raised = raised;
      this.clean = mine.clean();
      this.strategy = strategy;
    }
  }

  /** The fence names another holder than this grant: what this node buffered is lost. */
  static final class LostException extends FsException {
    LostException(long ino) {
      super(Errno.EIO, "inode " + ino + ": its lock was lost (another holder raised its fence);"
          + " what was buffered under it cannot be committed");
    }
  }

  /**
   * How long a raise waits for the cache to show it. The watch normally trails a commit by well
   * under a millisecond; past this the file's cached record and extent map are dropped instead
   * (read afresh), which costs reads and never serves what an earlier holder overwrote.
   */
  private static final long CATCH_UP_MS = 5000;

  private final Ctx ctx;
  private final AtomicLong grants = new AtomicLong();
  private final Map<Long, Fence> byInode = new ConcurrentHashMap<>();

  Fences(Ctx ctx) {
    this.ctx = ctx;
  }

  /** A fence for a new grant of this incarnation, dirty or clean. */
  InodeFence next(boolean clean) {
    return new InodeFence(ctx.membership.nodeName(), ctx.membership.generation(),
        grants.incrementAndGet(), clean);
  }

  /** A new exclusive grant, not raised yet. */
  Fence granted(HeldLock lock) {
    Fence f = new Fence(lock, next(false), false, ctx.tx.strategyRevision());
    byInode.put(lock.inode(), f);
    return f;
  }

  /**
   * The fence {@code mine}, put by the transaction that created {@code lock}'s inode: raised
   * from the start.
   */
  Fence created(HeldLock lock, InodeFence mine) {
    Fence f = new Fence(lock, mine, true, ctx.tx.strategyRevision());
    byInode.put(lock.inode(), f);
    return f;
  }

  /** For the transaction creating {@code ino}: puts {@code mine}, raised with the create. */
  void forCreate(MetaTx tx, long ino, InodeFence mine) {
    tx.put(ctx.keys.inodeFence(ino), mine.value());
  }

  /** The fence of {@code lock}, or null if it is not an exclusive grant this node knows. */
  Fence of(HeldLock lock) {
    Fence f = byInode.get(lock.inode());
    return f != null && f.lock.equals(lock) ? f : null;
  }

  /** {@code lock} is let go or lost: its fence is forgotten (the record stays, for the next). */
  void gone(HeldLock lock) {
    byInode.computeIfPresent(lock.inode(), (i, f) -> f.lock.equals(lock) ? null : f);
  }

  /** {@code from} is now held as {@code to} (made shared in place): no fence goes with it. */
  void demoted(HeldLock from) {
    gone(from);
  }

  /**
   * Before a change is buffered under {@code f}: raises the fence, or withdraws its clean
   * declaration — one round trip then, none in the usual case (raised and dirty already).
   *
   * @return false if the lock is being made shared: the caller asks for the lock again
   * @throws LostException if another holder raised since this grant did: the lock is lost
   */
  boolean dirty(Fence f) throws FsException {
    if (f.lost || f.strategy != ctx.tx.strategyRevision()) {
      throw new LostException(f.lock.inode());
    }
    if (f.demoting) {
      return false;
    }
    if (f.raised && !f.clean) {
      return true;
    }
    long ino = f.lock.inode();
    byte[] key = ctx.keys.inodeFence(ino);
    boolean[] lost = {false};
    long[] at = {0};
    ctx.tx.run("raise the fence of inode " + ino, tx -> {
      lost[0] = f.raised && !f.mine.sameHolder(decode(tx.get(key)));
      if (!lost[0]) {
        tx.put(key, f.mine.withClean(false).value());
        tx.afterCommitAt(r -> at[0] = r);
      }
      return null;
    });
    if (lost[0]) {
      f.lost = true;
      throw new LostException(ino);
    }
    if (!f.raised && !ctx.cache.awaitRevision(at[0], CATCH_UP_MS)) {
      forgetCached(ino); // what an earlier holder committed before the raise is read afresh
    }
    f.raised = true;
    f.clean = false;
    return true;
  }

  /**
   * In a commit under {@code f}: reads the record, so that the commit compares it, and goes on
   * only if it names this grant; raises it if this grant has not (the commit's own reads are
   * compared too, so it is built on what an earlier holder committed); declares the grant clean
   * if {@code declareClean}. Nothing is written otherwise: the record changes only when a grant
   * raises or its clean flag changes.
   *
   * @throws FsException EIO if another holder raised: what this node buffered under the lost
   *     lock cannot be committed (and nothing more is buffered under it)
   */
  void commit(MetaTx tx, Fence f, boolean declareClean) throws FsException {
    long ino = f.lock.inode();
    if (f.strategy != ctx.tx.strategyRevision()) {
      f.lost = true;
      throw new FsException(Errno.EIO, "inode " + ino + ": its lock was granted by the backend"
          + " the cluster switched away from; what was buffered under it cannot be committed");
    }
    byte[] key = ctx.keys.inodeFence(ino);
    InodeFence now = decode(tx.get(key));
    if (f.mine.sameHolder(now)) {
      if (declareClean && !now.clean()) {
        tx.put(key, f.mine.withClean(true).value());
      }
    } else if (f.raised) {
      f.lost = true;
      throw new FsException(Errno.EIO, "inode " + ino + ": its lock was lost (its fence names "
          + (now == null ? "no holder" : now.node() + "'s grant " + Long.toHexString(now.grant()))
          + "); what was buffered under it cannot be committed");
    } else {
      tx.put(key, f.mine.withClean(declareClean).value());
      tx.afterCommit(() -> f.raised = true);
    }
    if (declareClean) {
      f.clean = true; // set now, not after: a write racing the commit then withdraws it
    }
  }

  private void forgetCached(long ino) {
    ctx.cache.invalidate(ctx.keys.inode(ino));
    ctx.cache.invalidateGroup(io.etcfs.core.fs.cache.MetaCache.extentsSlot(ino));
  }

  private static InodeFence decode(Optional<KeyValue> stored) {
    return stored.map(kv -> InodeFence.decode(kv.value())).orElse(null);
  }

  /**
   * Before {@code f}'s lock is given up with nothing buffered: declares it clean, if it is raised
   * and dirty, so that other nodes answer a {@code stat} from their caches instead of asking for
   * the lock. Best effort (one round trip): a record left dirty costs readers a lock, never data.
   */
  void cleanBeforeRelease(Fence f) {
    if (!f.raised || f.clean) {
      return;
    }
    long ino = f.lock.inode();
    byte[] key = ctx.keys.inodeFence(ino);
    try {
      ctx.tx.run("declare inode " + ino + " clean", tx -> {
        if (f.mine.sameHolder(decode(tx.get(key)))) {
          tx.put(key, f.mine.withClean(true).value());
        }
        return null;
      });
      f.clean = true;
    } catch (FsException | RuntimeException e) {
      java.util.logging.Logger.getLogger(Fences.class.getName()).fine("inode " + ino
          + ": fence left dirty at release: " + e.getMessage());
    }
  }

  /** Whether {@code fence} was raised by this incarnation of this node. */
  boolean mine(InodeFence fence) {
    return fence.raisedBy(ctx.membership.nodeName(), ctx.membership.generation());
  }
}

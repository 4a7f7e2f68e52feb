package io.etcfs.core.fs.tx;

import io.etcfs.core.fs.cache.MetaCache;
import io.etcfs.spi.fencing.Membership;
import io.etcfs.spi.meta.Compare;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.MetaStoreException;
import io.etcfs.spi.meta.TxnResult;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.support.retry.Backoff;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.LongConsumer;
import java.util.logging.Logger;

/**
 * Runs metadata changes: each is one etcd transaction guarded by what it read and by this node's
 * generation (invariant 3: a fenced node's commits never apply); a change under an inode lock
 * adds that lock's guards itself. A conflict runs the body again with fresh reads, a bounded number of
 * times with jittered backoff so that two nodes fighting over one key do not livelock.
 */
public final class TxRunner {
  /** Who is told of each commit this node sends and of its revision. */
  public interface CommitListener {
    /** A commit is being sent; returns its sequence number. */
    long begin();

    /** The commit {@code seq} ended: at {@code revision}, or 0 if it did not apply. */
    void end(long seq, long revision);
  }

  private volatile CommitListener onCommit = new CommitListener() {
    @Override
    public long begin() {
      return 0;
    }

    @Override
    public void end(long seq, long revision) { }
  };

  /** etcd's default limit of operations (compares plus writes) in one transaction. */
  static final int MAX_TXN_OPS = 128;
  private static final Logger LOG = Logger.getLogger(TxRunner.class.getName());
  static final int MAX_ATTEMPTS = 24;
  /**
   * How long a commit waits for the cache watch to deliver it. The watch normally trails the
   * commit's reply by well under a millisecond; past this the written keys are dropped from the
   * cache instead, which costs reads but never serves a stale value.
   */
  private static final long WATCH_WAIT_MS = 1000;

  private final MetaStore store;
  private final MetaCache cache;
  private final Membership membership;
  /** The filesystem record's key, once {@link #guardStrategy} was called. */
  private volatile byte[] recordKey;
  /** The record's mod revision this node runs under; 0: no strategy guard. */
  private volatile long strategyRevision;

  public TxRunner(MetaStore store, MetaCache cache, Membership membership) {
    this.store = store;
    this.cache = cache;
    this.membership = membership;
  }

  /**
   * From now on every commit also compares the filesystem record's mod revision with {@code
   * revision}: the record names the lock backend and allocator the cluster uses and changes only
   * when they are switched (issue #15), so nothing this node does under the backends it started
   * with can commit once the cluster has switched, whether or not this node has noticed yet.
   * Called again with the new revision when this node follows a switch.
   */
  public void guardStrategy(byte[] recordKey, long revision) {
    synchronized (follow) {
      this.recordKey = recordKey;
      this.strategyRevision = revision;
      follow.notifyAll();
    }
  }

  /**
   * Whether this node takes part in a switch right now (issue #15): a commit that fails on the
   * strategy guard meanwhile waits for this node to follow the switch, then runs again (its body
   * builds its writes afresh, under the new backends), instead of failing with EIO. Safe because
   * what a body built under the old backends' grants — a data commit under an inode lock — is
   * refused by its fence once the node follows (Fences: a grant remembers its record revision).
   */
  public void switching(boolean on) {
    synchronized (follow) {
      switching = on;
      follow.notifyAll();
    }
  }

  private final Object follow = new Object();
  private boolean switching;
  /**
   * How long a commit waits for this node to follow a switch: longer than a switch's deadline
   * (the cutover comes before it or the switch rolls back), so the wait ends with either.
   */
  private static final long FOLLOW_WAIT_MS = 90_000;

  /** The record revision commits compare, or 0 if none. */
  public long strategyRevision() {
    return strategyRevision;
  }

  /** Fails with EIO once this node is fenced: it must change nothing any more. */
  public void checkFenced() throws FsException {
    if (membership.isFenced()) {
      throw new FsException(Errno.EIO, "node " + membership.nodeName() + " is fenced");
    }
  }

  /** Who is told of each commit this node sends, and of its revision. */
  public void onCommit(CommitListener listener) {
    this.onCommit = listener;
  }

  /** Runs {@code body} until its transaction commits (or it decides to write nothing). */
  public <T> T run(String what, TxBody<T> body) throws FsException {
    for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      checkFenced();
      MetaTx tx = new MetaTx(attempt == 0 ? cache : cache.fresh());
      T result;
      try {
        result = body.run(tx);
      } catch (FsException e) {
        // An answer like EEXIST or ENOENT may rest on a cached key another node changed a
        // moment ago (the watch not there yet): only a fresh read may give it.
        if (attempt == 0 && !(e instanceof OutcomeUnknownException)) {
          continue;
        }
        throw e;
      }
      if (!tx.hasWrites()) {
        return result;
      }
      CommitListener listener = onCommit;
      long seq = listener.begin();
      long revision = 0;
      try {
        revision = commit(what, tx);
      } finally {
        listener.end(seq, revision);
      }
      if (revision > 0) {
        // Read-your-writes: once the watch has applied this commit, the cache holds what it
        // wrote (and everything older); if it cannot say so in time, forget the written keys.
        committed(List.of(tx), revision);
        return result;
      }
      checkMember(what);
      checkStrategy(what);
      backoff(attempt);
    }
    throw new FsException(Errno.EIO, what + ": still conflicting after " + MAX_ATTEMPTS
        + " attempts");
  }

  /** One body of {@link #runTogether}, and what became of it. */
  public static final class Part<T> {
    final String what;
    final TxBody<T> body;
    private T result;
    private FsException failure;
    private boolean done;

    public Part(String what, TxBody<T> body) {
      this.what = what;
      this.body = body;
    }

    /** Whether it committed, or failed, or decided to write nothing. */
    public synchronized boolean done() {
      return done;
    }

    /** Its result, or its failure thrown; only once {@link #done}. */
    public synchronized T result() throws FsException {
      if (failure != null) {
        throw failure;
      }
      return result;
    }

    synchronized void finish(T value) {
      result = value;
      done = true;
    }

    synchronized void markCommitted() {
      done = true;
    }

    synchronized void fail(FsException e) {
      failure = e;
      done = true;
    }
  }

  /**
   * Runs several independent bodies (changes of different files) with as few commits as it can:
   * each body runs once against the cache, and those whose writes share no key go in one
   * transaction that carries every compare of each — so it applies only where each would have
   * applied alone — up to etcd's operation limit. Whatever cannot go together (a body that
   * failed, shared keys, the limit), and every body of a shared commit that a compare failed
   * (which of them conflicted is not known), then runs alone as with {@link #run}. A shared
   * commit whose outcome is unknown fails each of its bodies with {@link
   * OutcomeUnknownException}, as a commit of its own would. Every part is done on return.
   */
  public void runTogether(List<? extends Part<?>> parts) {
    try {
      checkFenced();
    } catch (FsException e) {
      parts.forEach(p -> p.fail(e));
      return;
    }
    List<Part<?>> alone = new ArrayList<>();
    List<Part<?>> together = new ArrayList<>();
    List<MetaTx> txs = new ArrayList<>();
    int ops = 2; // the generation and strategy guards
    for (Part<?> p : parts) {
      MetaTx tx = new MetaTx(cache);
      if (!attempt(p, tx)) {
        alone.add(p);
      } else if (!p.done()) {
        int size = tx.size();
        if (tx.disjoint(txs) && ops + size <= MAX_TXN_OPS) {
          together.add(p);
          txs.add(tx);
          ops += size;
        } else {
          alone.add(p);
        }
      }
    }
    if (!together.isEmpty()) {
      CommitListener listener = onCommit;
      long seq = listener.begin();
      long revision = 0;
      try {
        revision = commit(together.get(0).what + (together.size() > 1
            ? " and " + (together.size() - 1) + " more" : ""), txs);
      } catch (FsException e) {
        together.forEach(p -> p.fail(e));
      } finally {
        listener.end(seq, revision);
      }
      if (revision > 0) {
        committed(txs, revision);
        together.forEach(Part::markCommitted);
      } else if (!together.get(0).done()) {
        alone.addAll(together); // a compare failed: each alone, with fresh reads
      }
    }
    for (Part<?> p : alone) {
      runAlone(p);
    }
  }

  /** Runs the part's body into {@code tx}; false if it failed (it then runs alone). */
  private static <T> boolean attempt(Part<T> p, MetaTx tx) {
    T value;
    try {
      value = p.body.run(tx);
    } catch (FsException e) {
      return false; // perhaps an answer from a stale cache: run alone, which reads afresh
    }
    p.result = value;
    if (!tx.hasWrites()) {
      p.finish(value);
    }
    return true;
  }

  private <T> void runAlone(Part<T> p) {
    try {
      p.finish(run(p.what, p.body));
    } catch (FsException e) {
      p.fail(e);
    }
  }

  /** After a commit at {@code revision}: read-your-writes, then each attempt's actions. */
  private void committed(List<MetaTx> txs, long revision) {
    if (!cache.awaitRevision(revision, WATCH_WAIT_MS)) {
      cache.droppedUnshown(revision); // before the drops: see MetaCache#primeNew
      for (MetaTx tx : txs) {
        tx.writtenKeys().forEach(cache::invalidate);
        tx.deletedPrefixes().forEach(cache::invalidatePrefix);
      }
    }
    for (MetaTx tx : txs) {
      for (LongConsumer action : tx.afterCommitActions()) {
        action.accept(revision);
      }
    }
  }

  /** The commit's revision, or 0 if a compare failed. */
  private long commit(String what, MetaTx tx) throws FsException {
    return commit(what, List.of(tx));
  }

  /** The commit of attempts that go together, at one revision; 0 if a compare failed. */
  private long commit(String what, List<MetaTx> txs) throws FsException {
    List<Compare> extra = new ArrayList<>();
    extra.add(Compare.createRevision(membership.memberKey(), membership.generation()));
    long strategy = strategyRevision;
    if (strategy > 0) {
      extra.add(Compare.modRevision(recordKey, strategy));
    }
    io.etcfs.spi.meta.Txn txn = MetaTx.together(txs, extra);
    if (txn.size() > MAX_TXN_OPS) {
      throw new FsException(Errno.EIO, what + ": " + txn.size() + " operations, more than etcd"
          + " takes in one transaction (" + MAX_TXN_OPS + "); nothing was changed");
    }
    try {
      TxnResult r = store.commit(txn);
      return r.succeeded() ? r.revision() : 0;
    } catch (MetaStoreException e) {
      if (e.kind() == MetaStoreException.Kind.LEASE_NOT_FOUND) {
        // A put under a lease etcd no longer has (a lock session that just ended): etcd checks
        // leases before it applies anything, so nothing changed. Like a conflict, the body runs
        // again and builds its writes afresh (a create's lock grant under a new session).
        LOG.fine(what + ": " + e.getMessage() + "; running it again");
        return 0;
      }
      if (e.kind() == MetaStoreException.Kind.TOO_LARGE
          || e.kind() == MetaStoreException.Kind.UNAUTHENTICATED) {
        // Refused before it was applied: the outcome is known, nothing changed.
        throw new FsException(Errno.EIO, what + ": " + e.getMessage(), e);
      }
      // The outcome of a commit that timed out is unknown; the caches may be wrong either way.
      cache.invalidateAll();
      LOG.warning(what + ": commit outcome unknown: " + e.getMessage());
      throw new OutcomeUnknownException(what + ": commit outcome unknown: " + e.getMessage(), e);
    }
  }

  /** A failed commit may have failed on the generation guard: then the node is fenced. */
  private void checkMember(String what) throws FsException {
    Optional<KeyValue> me;
    try {
      me = store.get(membership.memberKey());
    } catch (MetaStoreException e) {
      throw storeFailure(what, e);
    }
    if (me.isEmpty() || me.get().createRevision() != membership.generation()) {
      throw new FsException(Errno.EIO, what + ": node " + membership.nodeName()
          + " is no longer a member with generation " + membership.generation());
    }
  }

  /**
   * A failed commit may have failed on the strategy guard: then the cluster switched backends
   * and this node has not followed (its commits cannot apply until it does). The record is read
   * from the cache, which the watch keeps current: no round trip per conflict.
   */
  private void checkStrategy(String what) throws FsException {
    long mine = strategyRevision;
    if (mine == 0) {
      return;
    }
    Optional<KeyValue> record;
    try {
      record = cache.get(recordKey);
    } catch (MetaStoreException e) {
      throw storeFailure(what, e);
    }
    long now = record.map(KeyValue::modRevision).orElse(0L);
    if (now != mine && awaitFollowed(mine)) {
      return; // followed: the body runs again under the new backends
    }
    if (now != mine && strategyRevision == mine) {
      throw new FsException(Errno.EIO, what + ": the filesystem record changed at revision "
          + now + " (a switch of lock backend or allocator); node " + membership.nodeName()
          + " still runs under revision " + mine + " and commits nothing until it follows");
    }
  }

  /** While a switch runs here: waits for this node to leave revision {@code mine} behind. */
  private boolean awaitFollowed(long mine) {
    long deadline = System.currentTimeMillis() + FOLLOW_WAIT_MS;
    synchronized (follow) {
      while (switching && strategyRevision == mine) {
        long left = deadline - System.currentTimeMillis();
        if (left <= 0) {
          return false;
        }
        try {
          follow.wait(left);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return false;
        }
      }
      return strategyRevision != mine;
    }
  }

  public static FsException storeFailure(String what, MetaStoreException e) {
    LOG.warning(what + ": metadata store failed: " + e.getMessage());
    return new FsException(Errno.EIO, what + ": " + e.getMessage(), e);
  }

  /** Between attempts of a conflicting commit: up to 2 ms, doubling to 50 ms, jittered. */
  private static final Backoff CONFLICT = new Backoff(Duration.ofMillis(2), Duration.ofMillis(50));

  private static void backoff(int attempt) {
    try {
      CONFLICT.sleepJittered(attempt);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}

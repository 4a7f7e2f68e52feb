package io.etcfs.core.fs;

import io.etcfs.core.fs.tx.MetaTx;
import io.etcfs.spi.lock.CreateGrant;
import io.etcfs.spi.lock.HeldLock;
import io.etcfs.spi.lock.LockMode;
import io.etcfs.spi.lock.LockService;
import io.etcfs.spi.lock.LockSession;
import io.etcfs.spi.lock.LockTimeoutException;
import io.etcfs.spi.lock.RecallHandler;
import io.etcfs.spi.meta.Compare;
import io.etcfs.spi.meta.NoWait;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.support.collect.BoundedMaps;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * This node's side of the cluster's inode locks (strict coherence, DESIGN "Coherence"): file data
 * is read under a shared lock and written under an exclusive one. Locks stay cached after use
 * until another node asks; then the recall flushes and commits what was written under the lock
 * and lets go. The backend only arbitrates; every data commit goes through the inode's fence
 * ({@link Fences}), so a node whose lock was lost — in whatever backend — commits nothing.
 *
 * <p>Order: a caller takes the cluster lock first and the file's local lock second; the recall
 * takes the local lock (waiting for calls in progress) before it flushes and releases. A caller
 * that finds its lock recalled between the two asks again.
 */
final class InodeLocks implements RecallHandler {
  private static final Logger LOG = Logger.getLogger(InodeLocks.class.getName());
  /**
   * How long a read or write waits for a lock. libfuse 2 gives no interrupt, so a callback that
   * never returned would leave its caller unkillable; past this the call fails with EIO.
   */
  static final Duration WAIT = Duration.ofSeconds(30);
  /** How long a new holder waits for its cache to show what the previous holders committed. */
  private static final long CATCH_UP_MS = 5000;
  /** See {@link #waitFor}: short, since it bounds how long such a call waits to be let in. */
  private static final Duration GOING_SLICE = Duration.ofMillis(20);
  /** Far above a lock watch's delay; a recall older than this has shown in the view. */
  private static final long EXCLUSIVE_COMING_NANOS = 2_000_000_000L;
  /** See {@link #wantedExclusive}. */
  private final Map<Long, Long> exclusiveWanted = new ConcurrentHashMap<>();

  private final Ctx ctx;
  private final Supplier<LockService> service;
  private final OpenFiles open;
  private final Fences fences;
  private final Map<Long, HeldLock> current = new ConcurrentHashMap<>();
  /**
   * Prefetched shared locks not used yet, each with the batch it came in (see {@link
   * #prefetchAhead}). Entries go at the first use or when the lock is let go.
   */
  private final Map<Long, Batch> unused = new ConcurrentHashMap<>();

  /** One prefetch's locks: how many came, how many were used, whether the next were asked for. */
  private static final class Batch {
    final AtomicInteger size = new AtomicInteger();
    final AtomicInteger used = new AtomicInteger();
    final AtomicBoolean nextAsked = new AtomicBoolean();
  }
  /**
   * The last lock let go per inode: a caller that obtained it just before must not use it. The
   * window is a few instructions wide, so the most recent few thousand are plenty (memory stays
   * bounded; a caller that missed the entry would only fail its commit, never corrupt).
   */
  private final Map<Long, HeldLock> lastGone = BoundedMaps.synchronizedOf(4096, false);
  /** The exclusive locks let go last, in order: a hint for prefetching them back together. */
  private final GoneOrder goneOrder = new GoneOrder();
  /** Locks being let go: no cache grant from them any more. */
  private final java.util.Set<HeldLock> going = ConcurrentHashMap.newKeySet();
  private volatile Flusher flusher;
  private volatile Delegations delegations;
  private volatile ReadAhead readAhead;
  private volatile Extents extents;
  private volatile LockService attached;
  private volatile LockSession watched;
  /** See {@link #attributesEpoch}. */
  private final java.util.concurrent.atomic.AtomicLong attributesEpoch =
      new java.util.concurrent.atomic.AtomicLong();

  InodeLocks(Ctx ctx, Supplier<LockService> service, OpenFiles open) {
    this.ctx = ctx;
    this.service = service;
    this.open = open;
    this.fences = new Fences(ctx);
  }

  void setFlusher(Flusher flusher) {
    this.flusher = flusher;
  }

  void setDelegations(Delegations delegations) {
    this.delegations = delegations;
  }

  void setReadAhead(ReadAhead readAhead, Extents extents) {
    this.readAhead = readAhead;
    this.extents = extents;
  }

  /** Holds {@code ino} in at least {@code mode}, waiting at most {@link #WAIT}. */
  HeldLock hold(long ino, LockMode mode) throws FsException {
    NoWait.check(); // a lock may take a round trip, or a recall elsewhere
    long deadline = System.nanoTime() + WAIT.toNanos();
    Pass early = passGate(ino, mode, deadline);
    if (early.going() != null) {
      return early.going(); // the kernel's write-back for a hand-over: see goingLock
    }
    if (early.counted()) {
      acquiring.decrementAndGet(); // admitted: the loop below counts it again
    }
    LockService s = service();
    HeldLock queued = current.get(ino);
    if (queued != null && provisional(queued)) {
      return queued; // a create queued here: nobody else knows the file (see #provisional)
    }
    HeldLock lock;
    HeldLock before;
    if (mode == LockMode.SHARED && !current.containsKey(ino)) {
      prefetch(s, ino);
    } else if (mode == LockMode.SHARED) {
      usedPrefetched(s, ino);
    } else if (mode == LockMode.EXCLUSIVE) {
      upgrading(ino);
    }
    long staleSince = 0; // see handedBackGone
    while (true) {
      HeldLock going = goingLock(ino, mode);
      if (going != null) {
        return going;
      }
      // Past the going lock: the kernel's write-back of a lock being let go by a switch's drain
      // is served under that lock; anything that needs a lock waits for the switch to end,
      // and then asks the backend bound after it. Counted before the gate is looked at, until
      // the grant is in current: see acquiring.
      boolean counted = true;
      acquiring.incrementAndGet();
      try {
        if (gate.closed()) {
          acquiring.decrementAndGet();
          counted = false;
          Pass pass = passGate(ino, mode, deadline);
          if (pass.going() != null) {
            return pass.going();
          }
          counted = pass.counted(); // admitted through the closed gate by the drain
          s = service();
          if (!counted) {
            continue; // the gate opened: count this call, and look again
          }
        }
        java.util.concurrent.CountDownLatch asker = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch other = asking.putIfAbsent(ino, asker);
        if (other != null) {
          // Another call of this node is asking the backend for this file's lock: this one
          // waits for its answer here, uncounted and in slices, not in the backend — where it
          // could not see the lock begin to go (see goingLock) if a recall came meanwhile, and
          // the recall's write-back could wait for this call's pages, as this call for it.
          acquiring.decrementAndGet();
          counted = false;
          awaitAsker(ino, other, deadline);
          continue;
        }
        Registered r;
        long asked = System.nanoTime();
        boolean granted = false;
        try {
          lock = s.acquire(ino, mode, waitFor(ino, mode, deadline));
          granted = true;
          r = register(lock); // before the next asker looks: see waitFor
        } catch (IllegalStateException e) {
          if (gate.closed() || service.get() != s) {
            // the backend was stopped by a switch while this call waited in it: ask the next
            // once the gate opens
            if (!gate.closed()) {
              s = service();
            }
            continue;
          }
          throw e;
        } catch (LockTimeoutException e) {
          if (System.nanoTime() < deadline) {
            continue; // a sliced wait for a lock this node holds: look at it again
          }
          throw new FsException(Errno.EIO, e.getMessage());
        } catch (UnsupportedOperationException e) {
          throw notBuilt(s, e);
        } finally {
          ctx.stats.lockWaits.record(System.nanoTime() - asked, !granted);
          asking.remove(ino, asker);
          asker.countDown();
        }
        if (r.gone()) {
          staleSince = handedBackGone(s, lock, staleSince, deadline);
          continue;
        }
        before = r.before();
        break;
      } finally {
        if (counted) {
          acquiring.decrementAndGet();
        }
      }
    }
    if (before != lock && !ctx.cache.awaitRevision(caughtUp(lock), CATCH_UP_MS)) {
      forgetCached(ino); // the cache cannot say it is that new
    }
    if (lock.mode() == LockMode.EXCLUSIVE && fences.of(lock) == null) {
      fences.granted(lock);
    }
    watch(s);
    return lock;
  }

  /**
   * Per inode, the latch of the call of {@link #hold} that is asking the backend for its lock:
   * one call per file and node at a time; the others wait for its answer ({@link #awaitAsker}).
   */
  private final Map<Long, java.util.concurrent.CountDownLatch> asking = new ConcurrentHashMap<>();

  /**
   * Waits until the call asking for {@code ino}'s lock has its answer, or one {@link
   * #GOING_SLICE} has passed (the lock may begin to go meanwhile: the caller looks again).
   *
   * @throws FsException EIO at the deadline
   */
  private static void awaitAsker(long ino, java.util.concurrent.CountDownLatch other,
      long deadline) throws FsException {
    long left = deadline - System.nanoTime();
    if (left <= 0) {
      throw new FsException(Errno.EIO, "inode " + ino + ": lock not granted within "
          + WAIT.toSeconds() + " s (another call of this node was asking for it)");
    }
    try {
      other.await(Math.min(left, GOING_SLICE.toNanos()),
          java.util.concurrent.TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new FsException(Errno.EINTR, "inode " + ino + ": interrupted waiting for its lock");
    }
  }

  /** What {@link #register} did: {@code gone} if it did not register the lock. */
  private record Registered(boolean gone, HeldLock before) {}

  /**
   * Makes {@code lock}, just granted, this node's lock on its inode — unless it was let go
   * meanwhile (letGo records a lock gone before it forgets it, and a recall of a lock not
   * registered records it in the same atomic step as it looks: see {@link #registeredElseGone}),
   * so that no lock is both registered here and released without its hand-over.
   */
  private Registered register(HeldLock lock) {
    long ino = lock.inode();
    boolean[] gone = {false};
    HeldLock[] before = {null};
    current.compute(ino, (k, v) -> {
      if (lock.equals(lastGone.get(k))) {
        gone[0] = true;
        return v;
      }
      before[0] = v;
      if (v != lock) {
        lastGone.remove(k); // a newer grant: the old lock can no longer be handed out
      }
      return lock;
    });
    return new Registered(gone[0], before[0]);
  }

  /** How long the backend may hand back a lock this node let go before it is told again. */
  private static final long STALE_RELEASE_NANOS =
      java.util.concurrent.TimeUnit.SECONDS.toNanos(2);

  /**
   * The backend handed {@code lock} back, which this node let go: normally for the instant
   * between letGo's forget and its release, so the call looks again at once. Should it last
   * (the backend never heard the release: met once, a Hazelcast lock after an allocator switch
   * on a loaded machine, where the call spun on a CPU for minutes), the backend is told again
   * after {@link #STALE_RELEASE_NANOS} — safe, as a lock is recorded gone only once nothing is
   * left to commit under it — and the call ends with EIO at its deadline rather than never.
   *
   * @return when this began (for the next look)
   */
  private long handedBackGone(LockService s, HeldLock lock, long since, long deadline)
      throws FsException {
    long now = System.nanoTime();
    if (now - deadline > 0) {
      throw new FsException(Errno.EIO, "inode " + lock.inode() + ": the lock backend still"
          + " hands out the lock this node let go (" + lock + ")");
    }
    if (since == 0) {
      Thread.onSpinWait();
      return now;
    }
    if (now - since > STALE_RELEASE_NANOS) {
      LOG.warning("inode " + lock.inode() + ": the lock backend still hands out the lock this"
          + " node let go " + (now - since) / 1_000_000 + " ms ago; giving it back again");
      try {
        s.release(lock);
      } catch (RuntimeException e) {
        LOG.log(Level.WARNING, "inode " + lock.inode() + ": " + e.getMessage());
      }
      return now;
    }
    sleepQuietly(1);
    return since;
  }

  /**
   * The revision the cache must reach to show what every earlier holder of {@code lock}
   * committed: the backend's grant revision, or, from a backend that knows none, the store's
   * revision now (one read: everything committed before the grant is at or before it).
   */
  private long caughtUp(HeldLock lock) throws FsException {
    if (lock.grantRevision() > 0) {
      return lock.grantRevision();
    }
    byte[] key = ctx.keys.inodeFence(lock.inode());
    try {
      return ctx.store.range(key, io.etcfs.spi.meta.Keys.after(key), 1).revision();
    } catch (io.etcfs.spi.meta.MetaStoreException e) {
      throw new FsException(Errno.EIO, "inode " + lock.inode() + ": " + e.getMessage(), e);
    }
  }

  /**
   * Before an exclusive lock is asked for where this node holds a shared one: the backend gives
   * the shared lock back first and queues again (a writer elsewhere may come in between), so the
   * shared lock is forgotten here now, as a recall would — the kernel's attributes go, and no
   * cache grant is named by it any more — rather than left looking held while it is gone.
   * Nothing is buffered under a shared lock. Calls meanwhile ask the backend and wait for the
   * upgrade.
   */
  private void upgrading(long ino) {
    HeldLock mine = current.get(ino);
    if (mine == null || mine.mode() != LockMode.SHARED || going.contains(mine)) {
      return;
    }
    attributesEpoch.incrementAndGet();
    ctx.notices.lockGoing(ino, false);
    forget(mine);
  }

  /**
   * Adds to the transaction that creates regular file {@code ino} what grants this node the
   * file's exclusive lock (SPI lock 2.2), and adopts that lock when the transaction commits: the
   * file's first write then needs no lock round trip. Without a backend that can, nothing is
   * added and the first write takes the lock as before; a create never fails for want of it.
   *
   * @return the grant added (for {@link #abandonCreated}), or null
   */
  CreateGrant grantOnCreate(MetaTx tx, long ino) {
    return grantOnCreate(tx, ino, false);
  }

  /**
   * As {@link #grantOnCreate(MetaTx, long)}; {@code clean} where the transaction also commits
   * everything the file holds: its fence, raised by the same transaction, says so from the start.
   */
  CreateGrant grantOnCreate(MetaTx tx, long ino, boolean clean) {
    if (gate.closed() && !provisionals.containsKey(ino)) {
      // A switch is draining this node's locks: the first write waits at the gate. Not for a
      // queued create whose provisional lock the drain waits on: what was written under it is
      // buffered, and is committed only under the lock its create brings, which the drain's
      // next round lets go (provisional locks are made only with the gate open, so none is
      // left once the drain is done and the node has answered).
      return null;
    }
    LockService s;
    CreateGrant grant;
    try {
      s = service();
      grant = s.createGrant(ino);
    } catch (FsException | RuntimeException e) {
      // No backend, one that has not built it, or no session to be had (etcd away; the create
      // itself will say so): the lock is asked for at the first write, as without a grant.
      LOG.log(Level.FINE, "inode " + ino + ": no lock granted with its create: " + e);
      return null;
    }
    if (grant == null) {
      return null;
    }
    if (grant.inode() != ino) {
      throw new IllegalStateException(s.backend() + " granted " + grant + " for inode " + ino);
    }
    grant.guards().forEach(tx::guard);
    tx.ops(grant.ops());
    io.etcfs.spi.fs.InodeFence mine = fences.next(clean);
    fences.forCreate(tx, ino, mine);
    tx.afterCommitAt(revision -> adopt(s, grant, revision, mine));
    return grant;
  }

  /**
   * The exclusive lock of a file whose create is queued under its directory's delegation
   * ({@link Delegations#queueCreate}), held here until that create commits and its grant is
   * adopted, or fails and it is dropped ({@link #dropProvisional}). No backend knows it: nobody
   * else can ask for the lock of a file no other node can see (a look-up in the directory
   * recalls the delegation, which commits the create, lock key included, first). Writes and
   * buffered attribute changes go on under it; whatever commits under it ({@link #fence}) or
   * lets it go waits for the create first. Its fencing token is 0 (it commits nothing itself);
   * the kernel caches pages under a cache grant of its own, which the adopted lock continues
   * (see {@link #cacheGrant}); it may keep the file's attributes, which change only here until
   * the create commits ({@link #attributesCacheable}), and are dropped if it is dropped
   * unadopted.
   */
  HeldLock provisional(long ino) throws FsException {
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (true) { // no new lock while a switch drains; counted as hold counts (acquiring)
      acquiring.incrementAndGet();
      if (!gate.closed()) {
        break;
      }
      acquiring.decrementAndGet();
      gate.pass(deadline);
    }
    try {
      LockService s = service();
      HeldLock lock = new HeldLock(ino, LockMode.EXCLUSIVE, 0, s.session().id(), 0);
      provisionals.put(ino, lock);
      current.put(ino, lock);
      return lock;
    } finally {
      acquiring.decrementAndGet();
    }
  }

  /** The locks {@link #provisional} made, until adopted or dropped. */
  private final Map<Long, HeldLock> provisionals = new ConcurrentHashMap<>();

  /** Whether {@code lock} is one of {@link #provisional}'s. */
  private boolean provisional(HeldLock lock) {
    return lock.equals(provisionals.get(lock.inode()));
  }

  /**
   * After the queued create of {@code ino} committed without its lock being adopted (its grant
   * abandoned, or the create lost): the next use asks the backend as for any file.
   */
  void dropProvisional(long ino) {
    HeldLock lock = current.get(ino);
    if (lock != null && provisional(lock)) {
      current.remove(ino, lock);
      attributesEpoch.incrementAndGet();
      ctx.notices.lockGoing(ino, false); // kept under it; nothing of its pages was
    }
    provisionals.remove(ino);
  }

  /** Waits until the create of {@code ino} queued here, if any, is committed (or lost). */
  private volatile java.util.function.LongConsumer awaitCreated = ino -> { };

  void setAwaitCreated(java.util.function.LongConsumer awaitCreated) {
    this.awaitCreated = awaitCreated;
  }

  /**
   * A committed create's lock, registered as a grant is in {@link #hold}: the next hold finds
   * it, recalls flush and release it, and its session's end forgets it. Its grant revision is
   * the create's, which the cache has reached (the create waited for it).
   */
  private void adopt(LockService s, CreateGrant grant, long revision,
      io.etcfs.spi.fs.InodeFence mine) {
    if (gate.closed() && !provisionals.containsKey(grant.inode())) {
      // A create that committed while a switch drains: its lock is not taken up, as no grant
      // may come in then (see acquiring); the file's first write asks through the gate. A
      // queued create's is, as the drain waits for it (see drain).
      try {
        s.abandonCreated(grant);
      } catch (RuntimeException e) {
        LOG.log(Level.WARNING, "inode " + grant.inode() + ": " + e.getMessage());
      }
      return;
    }
    HeldLock lock;
    try {
      lock = s.adoptCreated(grant, revision);
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "inode " + grant.inode() + ": lock granted with its create not"
          + " adopted: " + e.getMessage());
      lock = null;
    }
    if (lock == null || s != attached) {
      return; // taken at the first write; what the grant wrote goes with its session
    }
    continued.put(lock.inode(), lock.fencingToken()); // before it shows: see cacheGrant
    fences.created(lock, mine);
    if (mine.clean()) {
      hintClean(s, lock, true);
    }
    current.put(lock.inode(), lock);
    provisionals.remove(lock.inode()); // the create queued here committed: this replaces it
    // A recall may have come between the backend's adoption and here (past the minimum hold):
    // letGo recorded the lock before it forgot it, so seen here, it is gone already.
    if (lock.equals(lastGone.get(lock.inode()))) {
      current.remove(lock.inode(), lock);
      fences.gone(lock);
      return;
    }
    watch(s);
  }

  /**
   * Before the shared lock of a file this node does not hold is asked for: asks for it together
   * with those of the files a reader is likely to open next ({@link ReadAhead}), in one round
   * trip (SPI lock 2.4), and reads their extent maps at the same time. What is granted is registered
   * as {@link #adopt} registers a created lock, once the cache has reached the grant (the
   * revision every earlier exclusive holder's commits precede); the caller's own acquire then
   * finds its lock held. Nothing of this is needed for correctness: a failure is logged and the
   * caller's acquire goes on as without it.
   */
  private void prefetch(LockService s, long ino) {
    ReadAhead ahead = readAhead;
    if (ahead == null) {
      return;
    }
    List<Long> inos = candidates(ahead, ino);
    if (inos.size() < 2) {
      return; // the file alone: its acquire costs the one round trip this would
    }
    // The extent maps in the same moment, not after: a map read before the grant is safe, as
    // every snapshot is checked on use against the inode the cache holds (which a new holder's
    // cache has brought up to the grant), and a stale one is read again then.
    List<Long> candidates = inos;
    java.util.concurrent.Future<?> maps = READ_AHEAD.submit(() -> {
      try {
        extents.prime(candidates);
      } catch (FsException | RuntimeException e) {
        LOG.log(Level.FINE, "inode " + ino + ": extent maps not read ahead: " + e);
      }
    });
    try {
      prefetchLocks(s, ino, inos);
    } finally {
      try {
        maps.get(CATCH_UP_MS, java.util.concurrent.TimeUnit.MILLISECONDS);
      } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
        LOG.log(Level.FINE, "inode " + ino + ": extent maps not read ahead in time: " + e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * The first use of a prefetched lock. Once half of its batch is used, the next batch (the files
   * after this one that this node does not hold) is asked for in the background, so a reader
   * going through a directory finds the next locks granted instead of waiting a round trip every
   * {@link ReadAhead#BATCH} files. O(1) per use; the listing is walked once per batch.
   */
  private void usedPrefetched(LockService s, long ino) {
    Batch b = unused.remove(ino);
    if (b == null || 2 * b.used.incrementAndGet() < b.size.get()
        || !b.nextAsked.compareAndSet(false, true)) {
      return;
    }
    try {
      READ_AHEAD.execute(() -> prefetchAhead(s, ino));
    } catch (java.util.concurrent.RejectedExecutionException e) {
      LOG.log(Level.FINE, "inode " + ino + ": next shared locks not asked for: " + e);
    }
  }

  /** In the background: the locks and extent maps of the files a reader at {@code ino} opens next. */
  private void prefetchAhead(LockService s, long ino) {
    ReadAhead ahead = readAhead;
    if (ahead == null || s != attached) {
      return;
    }
    List<Long> inos = candidates(ahead, ino);
    List<Long> next = inos.subList(1, inos.size()); // ino itself is held
    if (next.size() < 2) {
      return;
    }
    try {
      extents.prime(next);
    } catch (FsException | RuntimeException e) {
      LOG.log(Level.FINE, "inode " + ino + ": extent maps not read ahead: " + e);
    }
    prefetchLocks(s, ino, List.copyOf(next)); // ino: the reader's position, not among them
  }

  /**
   * {@code ino} first, then the files not held here that a reader at {@code ino} opens next: from
   * the listings this node has cached, or, with none, the exclusive locks let go together with
   * this one's.
   */
  private List<Long> candidates(ReadAhead ahead, long ino) {
    List<Long> inos = ahead.around(ino, current::containsKey);
    return inos.size() >= 2 ? inos
        : goneOrder.around(ino, ReadAhead.BATCH, current::containsKey);
  }

  /** Threads that read extent maps ahead while the shared locks are asked for. */
  private static final java.util.concurrent.ExecutorService READ_AHEAD =
      java.util.concurrent.Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "etcfs-read-ahead");
        t.setDaemon(true);
        return t;
      });

  /** The shared locks of {@link #prefetch}: asked for, and registered as they are granted. */
  private void prefetchLocks(LockService s, long ino, List<Long> inos) {
    acquiring.incrementAndGet(); // see acquiring: none of these may come after a drain
    try {
      if (!gate.closed()) {
        prefetchLocksCounted(s, ino, inos);
      }
    } finally {
      acquiring.decrementAndGet();
    }
  }

  private void prefetchLocksCounted(LockService s, long ino, List<Long> inos) {
    List<HeldLock> got;
    try {
      got = s.prefetchShared(inos);
    } catch (RuntimeException e) {
      LOG.log(Level.FINE, "inode " + ino + ": no shared locks prefetched: " + e);
      return;
    }
    if (got.isEmpty()) {
      return;
    }
    long newest = got.stream().mapToLong(HeldLock::grantRevision).max().orElse(0);
    if (!ctx.cache.awaitRevision(newest, CATCH_UP_MS)) {
      got.forEach(lock -> forgetCached(lock.inode())); // the cache cannot say it has them
    }
    Batch batch = new Batch();
    for (HeldLock lock : got) {
      if (s != attached || current.putIfAbsent(lock.inode(), lock) != null) {
        continue; // another backend meanwhile; or one held already: the backend keeps its own
      }
      // recalled before it was registered here: letGo recorded it, as for adopt
      if (lock.equals(lastGone.get(lock.inode()))) {
        current.remove(lock.inode(), lock);
      } else if (lock.inode() != ino) { // the asker's own is in use at once
        batch.size.incrementAndGet(); // counted before it can be used: used never passes size
        unused.put(lock.inode(), batch);
        if (!current.containsKey(lock.inode())) {
          unused.remove(lock.inode()); // let go meanwhile (forget ran before the put)
        }
      }
    }
    watch(s);
  }

  /** Forgets {@code ino}'s record and extent map here, so that they are read afresh. */
  private void forgetCached(long ino) {
    ctx.cache.invalidate(ctx.keys.inode(ino));
    ctx.cache.invalidateGroup(io.etcfs.core.fs.cache.MetaCache.extentsSlot(ino));
  }

  /** The create that carried {@code grant} has an unknown outcome: drop what it may have put. */
  void abandonCreated(CreateGrant grant) {
    LockService s = attached;
    if (s == null) {
      return;
    }
    try {
      s.abandonCreated(grant);
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "inode " + grant.inode() + ": " + e.getMessage());
    }
  }

  /**
   * Waits while a switch holds the gate closed, and returns null once it is open — or the lock
   * on {@code ino} this node is letting go, as soon as it begins to: the drain's hand-over makes
   * the kernel write back or drop the file's pages, and a write in flight holds some of them
   * locked until it is answered. Served under the going lock, that write lets the hand-over on.
   */
  private Pass passGate(long ino, LockMode mode, long deadline) throws FsException {
    if (!gate.closed()) {
      return new Pass(goingLock(ino, mode), false);
    }
    HeldLock held = current.get(ino);
    boolean upgrade = mode == LockMode.EXCLUSIVE && held != null
        && held.mode() == LockMode.SHARED;
    if (upgrade) {
      upgradeWaiters.merge(ino, 1, Integer::sum);
    }
    try {
      while (true) {
        HeldLock going = goingLock(ino, mode);
        if (going != null) {
          return new Pass(going, false);
        }
        // The drain lets this upgrade through first (see drain): counted while it is admitted,
        // so that the drain, which ends only with none counted, waits for its grant.
        acquiring.incrementAndGet();
        if (admitted.contains(ino)) {
          return new Pass(null, true);
        }
        acquiring.decrementAndGet();
        if (gate.awaitOpen(deadline, GATE_SLICE_MS)) {
          return new Pass(goingLock(ino, mode), false);
        }
      }
    } finally {
      if (upgrade) {
        upgradeWaiters.computeIfPresent(ino, (k, n) -> n == 1 ? null : n - 1);
      }
    }
  }

  /**
   * After a switch bound the new backend: attaches it now, not at the next hold, so that a late
   * recall from the backend left behind is known for one ({@link #fromAnotherBackend}) — its
   * threads are being stopped, and a flush on one of them would be cut off.
   */
  void attachBound() throws FsException {
    service();
  }

  /**
   * What {@link #passGate} found: the going lock to serve the call under, or none; {@code
   * counted} if the drain admitted the call through the closed gate, counted in {@link
   * #acquiring} (the caller uncounts it).
   */
  private record Pass(HeldLock going, boolean counted) {}

  /**
   * Calls on their way to a grant from the backend ({@link #hold}, {@link #provisional}, {@link
   * #prefetchLocks}), each counted from before it looks at the gate until its grant is in {@link
   * #current}. A switch's drain ends only when it finds none counted and nothing held, after the
   * gate closed: so no grant of the backend being left arrives after this node answered that it
   * holds nothing — such a grant's writes could never commit (its fence names the old record
   * revision), and were lost with an EIO at the file's close (found by the experiment runner
   * under load: a lock asked for just before the gate closed was granted after the drain).
   */
  private final java.util.concurrent.atomic.AtomicInteger acquiring =
      new java.util.concurrent.atomic.AtomicInteger();

  /** Calls at the gate that want the exclusive lock of a file held shared here, by inode. */
  private final Map<Long, Integer> upgradeWaiters = new ConcurrentHashMap<>();
  /** Files whose upgrade the drain lets through the gate, under the backend being left. */
  private final java.util.Set<Long> admitted = ConcurrentHashMap.newKeySet();

  /** How often a call at the gate looks for its file's lock going (letGo also wakes it). */
  private static final long GATE_SLICE_MS = 50;

  /** Closed while a switch of lock backend or allocator drains this node (issue #15). */
  final SwitchGate gate = new SwitchGate();

  /**
   * A switch's drain: with the gate closed, lets go of every lock this node holds, as a recall
   * would (the kernel writes back, what is buffered commits, the backend is told), until none is
   * left — a create's lock adopted meanwhile is let go on the next round.
   *
   * @throws FsException EIO naming the inode whose commit failed (the switch then rolls back)
   */
  void drain(long deadlineNanos) throws FsException {
    try {
      while (!current.isEmpty() || acquiring.get() > 0) {
        if (System.nanoTime() > deadlineNanos) {
          throw new FsException(Errno.EIO, current.isEmpty()
              ? acquiring.get() + " lock requests still waiting after the drain's time"
              : "locks still held after the drain's time: inodes " + heldInodes());
        }
        if (current.isEmpty()) {
          sleepQuietly(2); // a request made before the gate closed: its grant is let go next
          continue;
        }
        boolean waited = false;
        for (HeldLock lock : List.copyOf(current.values())) {
          long ino = lock.inode();
          if (provisional(lock)) {
            awaitCreated.accept(ino); // the queued create commits, then its lock goes
            continue;
          }
          if (lock.mode() == LockMode.SHARED && upgradeWaiters.containsKey(ino)) {
            // A write waits at the gate for this file's exclusive lock, and the kernel holds
            // the pages it writes locked until it is answered: letting the shared lock go now
            // would have the kernel drop those pages, which waits for that write. The write
            // goes first, under the backend being left; its exclusive lock goes next round.
            admitted.add(ino);
            gate.poke();
            waited = true;
            continue;
          }
          admitted.remove(ino);
          letGo(lock);
        }
        if (waited) {
          sleepQuietly(2);
        }
      }
    } finally {
      admitted.clear();
    }
  }

  private static void sleepQuietly(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** The inodes whose lock this node holds right now. */
  java.util.Set<Long> heldInodes() {
    return java.util.Set.copyOf(current.keySet());
  }

  /**
   * Before a file's attributes are answered from the cache: if another node holds its lock
   * exclusively and may have written without committing (size, times) — its inode fence is
   * raised and not declared clean — or may be granted it and write at any moment, this node
   * takes the shared lock first: a recall, the writer commits and lets go. Nothing happens for a
   * file this node holds a lock on (then nobody else writes it), nor, costing a map look-up or
   * two, for one whose fence is not dirty in the cache and whose lock the backend's view shows
   * nobody else holding or awaiting exclusively (the usual case), or shows held by a writer
   * whose fence says it committed everything. A backend without a view costs one read of the
   * fence (linearizable: a raise that came before it shows). A file created with its writer's
   * lock shows here together with its fence: one transaction, one watch.
   *
   * @return whether the caller must read the attributes afresh
   */
  boolean beforeAttributes(long ino) throws FsException {
    if (current.containsKey(ino)) {
      return false;
    }
    gate.pass(System.nanoTime() + WAIT.toNanos()); // the backend's view is the next one's
    LockService s = service();
    if (exclusiveComing(ino)) {
      hold(ino, LockMode.SHARED); // queued behind that writer, whose grant may not show yet
      return true;
    }
    io.etcfs.spi.fs.InodeFence fence = cachedFence(ino);
    boolean writer = dirtyElsewhere(fence);
    if (!writer) {
      switch (s.writerElsewhere(ino)) {
        case NONE -> { }
        case HOLDING -> writer = fence == null || !fence.clean();
        case WAITING -> writer = true;
        case UNKNOWN -> {
          fence = storedFence(ino);
          writer = dirtyElsewhere(fence);
        }
      }
    }
    if (writer) {
      hold(ino, LockMode.SHARED);
      return true;
    }
    return fence != null && !fences.mine(fence);
  }

  /** The fence of {@code ino} if this node's cache holds it, asking nobody; else null. */
  private io.etcfs.spi.fs.InodeFence cachedFence(long ino) {
    return ctx.cache.cachedOnly(ctx.keys.inodeFence(ino))
        .map(kv -> io.etcfs.spi.fs.InodeFence.decode(kv.value())).orElse(null);
  }

  /**
   * The fence of {@code ino} read from etcd, with the cache brought up to it (what a writer
   * declared clean committed before it).
   */
  private io.etcfs.spi.fs.InodeFence storedFence(long ino) throws FsException {
    NoWait.check();
    java.util.Optional<io.etcfs.spi.meta.KeyValue> kv;
    try {
      kv = ctx.store.get(ctx.keys.inodeFence(ino));
    } catch (io.etcfs.spi.meta.MetaStoreException e) {
      throw new FsException(Errno.EIO, "inode " + ino + ": " + e.getMessage(), e);
    }
    if (kv.isPresent() && !ctx.cache.awaitRevision(kv.get().modRevision(), CATCH_UP_MS)) {
      forgetCached(ino); // the cache cannot say it is that new
    }
    return kv.map(v -> io.etcfs.spi.fs.InodeFence.decode(v.value())).orElse(null);
  }

  /** A fence another holder raised and did not declare clean; not this incarnation's own. */
  private boolean dirtyElsewhere(io.etcfs.spi.fs.InodeFence fence) {
    return fence != null && !fence.clean() && !fences.mine(fence);
  }

  /**
   * Before a change is buffered under {@code lock}: raises the inode's fence, or withdraws the
   * clean declaration a close made (one round trip then; none otherwise).
   *
   * @return false if the lock is gone meanwhile (the caller asks for it again)
   */
  boolean dirty(HeldLock lock) throws FsException {
    if (provisional(lock)) {
      return current.get(lock.inode()) == lock; // never declared clean
    }
    Fences.Fence f = fences.of(lock);
    if (f == null || current.get(lock.inode()) != lock) {
      return false;
    }
    boolean wasClean = f.clean;
    try {
      if (!fences.dirty(f)) {
        return false;
      }
    } catch (Fences.LostException e) {
      lost(lock);
      throw e;
    }
    if (wasClean) {
      hintClean(attached, lock, false);
    }
    return true;
  }

  /**
   * {@code lock}'s fence names another holder (a wrong grant, or a session that lapsed unseen):
   * forgotten here as a lost session's locks are (the kernel drops what it cached under it), and
   * given back, so that the next use asks the backend afresh.
   */
  private void lost(HeldLock lock) {
    LOG.log(Level.WARNING, "inode " + lock.inode() + ": another holder raised the fence of a"
        + " lock this node held; letting it go");
    attributesEpoch.incrementAndGet();
    ctx.notices.lockGoing(lock.inode(), false);
    forget(lock);
    LockService s = attached;
    if (s != null) {
      s.release(lock);
    }
  }

  /** Tells the backend whether a lock is clean: its policy's hint, never its safety. */
  private static void hintClean(LockService s, HeldLock lock, boolean clean) {
    if (s == null) {
      return;
    }
    try {
      s.clean(lock, clean);
    } catch (RuntimeException e) {
      LOG.log(Level.FINE, "inode " + lock.inode() + ": clean hint not taken: " + e);
    }
  }

  /** A backend that has not built a call (the Hazelcast stub): ENOSYS at the FUSE boundary. */
  private static FsException notBuilt(LockService s, UnsupportedOperationException e) {
    return new FsException(Errno.ENOSYS, "lock backend " + s.backend() + ": " + e.getMessage());
  }

  /**
   * This node's exclusive lock on {@code ino} if it holds one that is not being let go, asking
   * nobody; else null.
   */
  HeldLock heldExclusive(long ino) {
    HeldLock lock = current.get(ino);
    return lock != null && lock.mode() == LockMode.EXCLUSIVE && !going.contains(lock) ? lock
        : null;
  }

  /** Whether {@code lock} is still this node's lock on {@code ino} (not recalled meanwhile). */
  boolean isCurrent(long ino, HeldLock lock) {
    return current.get(ino) == lock;
  }

  /**
   * This node's exclusive lock on {@code ino}, fit to commit under: fails with EIO if this node
   * no longer holds that lock provably — what it buffered can no longer be committed.
   */
  private HeldLock committing(long ino) throws FsException {
    HeldLock lock = current.get(ino);
    if (lock != null && provisional(lock)) {
      awaitCreated.accept(ino); // committed with its lock, or lost: either way not this one
      lock = current.get(ino);
    }
    LockService s = attached;
    if (lock == null || lock.mode() != LockMode.EXCLUSIVE || s == null || provisional(lock)) {
      throw new FsException(Errno.EIO, "inode " + ino + ": no exclusive lock held any more;"
          + " writes buffered under the lost lock cannot be committed");
    }
    if (expired(s)) {
      throw new FsException(Errno.EIO, "inode " + ino + ": lock session expired;"
          + " writes buffered under it cannot be committed");
    }
    return lock;
  }

  /** Fails with EIO where {@link #fence} would: before any work towards a commit is done. */
  void checkCommittable(long ino) throws FsException {
    committing(ino);
  }

  /**
   * Adds to {@code tx}, a commit of {@code ino}'s data or entries, what fences it (see {@link
   * Fences#commit}): the commit then applies only if this node's exclusive grant is still the
   * inode's holder. With {@code declareClean} (a commit that leaves nothing of the file
   * buffered) the fence says so, and other nodes state the file from their caches.
   */
  void fence(MetaTx tx, long ino, boolean declareClean) throws FsException {
    HeldLock lock = committing(ino);
    Fences.Fence f = fences.of(lock);
    if (f == null) {
      throw new FsException(Errno.EIO, "inode " + ino + ": its exclusive lock has no fence");
    }
    boolean wasClean = f.clean;
    fences.commit(tx, f, declareClean);
    if (declareClean && !wasClean) {
      hintClean(attached, lock, true);
    }
  }

  /**
   * Flushes {@code ino} and lets go of this node's lock on it now (user.etcfs.publish). A flush
   * that fails is reported and the lock kept.
   */
  void publish(long ino) throws FsException {
    awaitCreated.accept(ino);
    HeldLock lock = current.get(ino);
    if (lock != null) {
      letGo(lock);
    }
  }

  /** Another node wants the lock: flush and commit what was written under it, then let go. */
  @Override
  public void recall(HeldLock lock, LockMode wanted) {
    if (fromAnotherBackend(lock)) {
      // A backend a switch left (its lock was let go at the drain, or never used here since)
      // asks for a lock late: the file is held under the new backend now, if at all, and what
      // is buffered of it belongs to that grant. Recorded as gone, in case a hold just got it.
      lastGone.put(lock.inode(), lock);
      return;
    }
    ctx.stats.recalls.increment();
    long asked = System.nanoTime();
    if (wanted == LockMode.EXCLUSIVE) {
      wantedExclusive(lock.inode());
    }
    try {
      letGo(lock);
      ctx.stats.recallHandovers.record(System.nanoTime() - asked, false);
    } catch (FsException | RuntimeException e) {
      // The lock goes anyway (the service releases it when this returns): holding it would
      // stall the other node for good; what could not be committed is lost, and this node's
      // later fsync or close of the file reports EIO.
      LOG.log(Level.WARNING, "inode " + lock.inode() + ": flush on recall failed: "
          + e.getMessage());
      forget(lock);
      ctx.stats.recallHandovers.record(System.nanoTime() - asked, true);
    }
  }

  /**
   * The backend is about to make this node's clean exclusive lock shared in place (SPI lock 2.6):
   * agreed once the calls in progress on the file are done (its local lock) if nothing of it is
   * buffered — then the pages and attributes the kernel holds stay, as nobody can change the file
   * without recalling the shared lock. Writes meanwhile find {@link #dirty} refused and ask for
   * the lock again (an upgrade: a new grant).
   */
  @Override
  public boolean downgrading(HeldLock lock) {
    long ino = lock.inode();
    Delegations queued = delegations;
    if (queued != null && queued.busy(ino)) {
      return false; // unlinks queued under it: a shared lock would not let them commit
    }
    FileData f = open.get(ino);
    if (f == null) {
      return current.get(ino) == lock && demoting(lock);
    }
    f.lock.lock();
    try {
      return current.get(ino) == lock && !f.hasBuffered() && demoting(lock);
    } finally {
      f.lock.unlock();
    }
  }

  /**
   * Agrees to {@code lock} becoming shared: from here nothing more is buffered under it ({@link
   * #dirty} refuses, and the writer asks for the lock again) until {@link #downgraded} says the
   * change did not happen. This, not the backend, is what makes the change safe.
   */
  private boolean demoting(HeldLock lock) {
    Fences.Fence fence = fences.of(lock);
    if (fence != null) {
      fence.demoting = true;
    }
    return true;
  }

  /** The shared lock {@code to} replaces {@code from}, unless a newer grant did meanwhile. */
  @Override
  public void downgraded(HeldLock from, HeldLock to) {
    Fences.Fence fence = fences.of(from);
    if (to != from) {
      ctx.stats.downgrades.increment();
      current.replace(from.inode(), from, to);
      fences.demoted(from);
    } else if (fence != null) {
      fence.demoting = false;
    }
  }

  /**
   * How long one backend wait may last. For a lock this node holds in a sufficient mode the
   * backend answers at once — unless the lock is being recalled, when it waits for the
   * hand-over; that wait is cut into short slices, so that a read or write the hand-over's
   * write-back waits for (see {@link #goingLock}) is served under the going lock instead of
   * waiting for the hand-over that waits for it.
   */
  private Duration waitFor(long ino, LockMode mode, long deadline) {
    HeldLock mine = current.get(ino);
    long left = Math.max(1, deadline - System.nanoTime());
    if (mine != null && (mode == LockMode.SHARED || mine.mode() == LockMode.EXCLUSIVE)) {
      return Duration.ofNanos(Math.min(left, GOING_SLICE.toNanos()));
    }
    return Duration.ofNanos(left);
  }

  /**
   * While a lock is being let go, the kernel writes back what it holds dirty of the file (see
   * {@link #letGo}), and those writes — and reads racing them — must be served under the lock
   * that is going: asking the backend for it again would wait for the hand-over, which waits for
   * them. Calls served so still meet the file's local lock, which the hand-over takes next, and
   * then find the lock gone and ask again.
   */
  private HeldLock goingLock(long ino, LockMode mode) {
    HeldLock held = current.get(ino);
    if (held != null && going.contains(held)
        && (mode == LockMode.SHARED || held.mode() == LockMode.EXCLUSIVE)) {
      return held;
    }
    return null;
  }

  /**
   * The grant under which the kernel may cache {@code ino} now: the held lock's fencing token
   * (new for every grant), or 0 if none is held, it is being let go, or its session lapsed.
   */
  long cacheGrant(long ino) {
    HeldLock lock = current.get(ino);
    LockService s = attached;
    if (lock == null || s == null || going.contains(lock) || expired(s)) {
      return 0;
    }
    if (provisional(lock)) {
      return provisionalGrant(ino);
    }
    Long carried = continued.get(ino);
    return carried != null && carried == lock.fencingToken() ? provisionalGrant(ino)
        : lock.fencingToken();
  }

  /**
   * Whether {@code lock} is not of the backend this node runs under now: a backend it has
   * switched away from (whose session is not the attached backend's).
   */
  private boolean fromAnotherBackend(HeldLock lock) {
    LockService s = attached;
    if (s == null || current.get(lock.inode()) == lock) {
      return false;
    }
    try {
      return s.session().id() != lock.sessionId();
    } catch (IllegalStateException e) {
      return false; // the attached backend itself is stopping: treat the recall as usual
    }
  }

  /** Whether {@code s}'s session lapsed, or {@code s} was stopped (a switch let it go). */
  private static boolean expired(LockService s) {
    try {
      return s.session().isExpired();
    } catch (IllegalStateException e) {
      return true;
    }
  }

  /**
   * The cache grant of a queued create's provisional lock, and of the lock its create adopts
   * for as long as that grant lasts (its fencing token, also when made shared in place): what
   * the kernel cached of a new file while its create was queued stays valid, since no other
   * node could know the file, let alone write it, from its create to the adopted grant's end.
   * Never a fencing token (those are positive) and never the front ends' "stale" mark (-1).
   */
  private static long provisionalGrant(long ino) {
    return -2 - ino;
  }

  /**
   * The fencing tokens of the locks adopted from queued creates, by inode (see {@link
   * #provisionalGrant}). Bounded: an entry lost costs only a page drop, as for any new grant.
   */
  private final Map<Long, Long> continued = BoundedMaps.synchronizedOf(16_384, false);

  private void letGo(HeldLock lock) throws FsException {
    if (!registeredElseGone(lock)) {
      letGoUnregistered(lock);
      return;
    }
    // Before anything of the hand-over: from here the kernel caches nothing more under this
    // lock, and what it cached of the attributes is dropped now (data: at the next grant check)
    going.add(lock);
    gate.poke(); // a write at the gate for this file is served under the going lock now
    try {
      letGoNow(lock);
    } finally {
      going.remove(lock);
    }
  }

  private void letGoNow(HeldLock lock) throws FsException {
    long ino = lock.inode();
    Fences.Fence fence = fences.of(lock); // before forget() forgets it
    Delegations queued = delegations;
    if (queued != null) {
      queued.beforeLetGo(lock); // unlinks queued under a directory's lock, or of this inode
    }
    attributesEpoch.incrementAndGet();
    if (lock.mode() == LockMode.EXCLUSIVE) {
      goneOrder.add(ino);
    }
    ctx.notices.lockGoing(ino, lock.mode() == LockMode.EXCLUSIVE);
    FileData f = open.get(ino);
    if (f != null) {
      f.lock.lock();
      try {
        if (lock.mode() == LockMode.EXCLUSIVE && f.hasBuffered()) {
          flusher.flush(f, true); // nothing stays buffered: the fence says so for the next
        }
        forget(lock);
      } finally {
        f.lock.unlock();
      }
    } else {
      forget(lock);
    }
    if (fence != null) {
      fences.cleanBeforeRelease(fence); // a flush above declared it clean already, usually
    }
    LockService s = attached;
    if (s != null) {
      s.release(lock);
    }
  }

  /**
   * Whether {@code lock} is this node's registered lock on its inode; if not, it is recorded
   * gone in the same atomic step, so that a call that was granted it and has not registered it
   * yet never will ({@link #register}).
   */
  private boolean registeredElseGone(HeldLock lock) {
    boolean[] registered = {false};
    current.compute(lock.inode(), (k, v) -> {
      if (lock.equals(v)) {
        registered[0] = true;
      } else {
        lastGone.put(k, lock);
      }
      return v;
    });
    return registered[0];
  }

  /**
   * The backend hands over a lock this node does not have registered: granted to a call that
   * has not registered it yet (a recall came first), or let go already and handed back. The
   * kernel holds nothing under it — pages are cached only under a registered lock, and a lock's
   * are written back and dropped when it is let go — so nothing is written back or dropped, and
   * nothing waits for a request in flight. (Met under load after a lock switch: the write-back
   * of such a lock waited for a write whose call waited in the backend for that very lock, and
   * the write failed with EIO after 30 s.) The attributes go, as they cost no wait.
   */
  private void letGoUnregistered(HeldLock lock) {
    Delegations queued = delegations;
    if (queued != null) {
      queued.beforeLetGo(lock);
    }
    attributesEpoch.incrementAndGet();
    ctx.notices.lockGoing(lock.inode(), false);
    LockService s = attached;
    if (s != null) {
      s.release(lock);
    }
  }

  /**
   * Forgets a lock let go (or being let go): recorded first, so that a caller that obtained it
   * just before sees it gone (see {@link #hold}), then no longer current.
   */
  private void forget(HeldLock lock) {
    lastGone.put(lock.inode(), lock);
    current.remove(lock.inode(), lock);
    fences.gone(lock);
    unused.remove(lock.inode());
  }

  private LockService service() throws FsException {
    LockService s = service.get();
    if (s == null) {
      throw new FsException(Errno.EIO, "no lock backend is bound");
    }
    if (s != attached) {
      NoWait.check(); // attaching asks the backend things: not on a thread that must not wait
      synchronized (this) {
        if (s != attached) {
          current.clear(); // locks of another backend mean nothing to this one
          provisionals.clear();
          s.setRecallHandler(this);
          attributesEpoch.incrementAndGet();
          tells(s);
          attached = s;
        }
      }
    }
    return s;
  }

  private void tells(LockService s) {
    try {
      s.watchExclusive(this::writerElsewhere);
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "lock backend " + s.backend() + " does not tell of writers: " + e);
    }
  }

  /**
   * The cache watch's events: a fence another holder raised dirty is a writer elsewhere, told
   * as the backend tells of one ({@link #writerElsewhere}) — before it buffers anything, as it
   * raises first. Whatever the backend, this is how the kernel learns to drop the attributes it
   * keeps without a lock.
   */
  void onEvents(List<io.etcfs.spi.meta.WatchEvent> events) {
    for (io.etcfs.spi.meta.WatchEvent e : events) {
      long ino = ctx.keys.fenceInode(e.kv().keyString());
      if (ino >= 0 && e.kv().value() != null
          && dirtyElsewhere(io.etcfs.spi.fs.InodeFence.decode(e.kv().value()))) {
        writerElsewhere(ino);
      }
    }
  }

  /**
   * Another node starts to hold or ask for {@code ino}'s lock exclusively (the backend's
   * notification thread): attributes the kernel keeps of it without a lock go now, before the
   * backend's view shows the writer (and so before any answer of this node could).
   */
  private void writerElsewhere(long ino) {
    attributesEpoch.incrementAndGet();
    if (!current.containsKey(ino)) {
      ctx.notices.lockGoing(ino, false); // a lock held here is recalled: that drops them
    }
  }

  /**
   * Another node asked for {@code ino}'s lock exclusively and this node's lock was recalled for
   * it: until the lock view shows that writer (its watch may trail the hand-over by a moment),
   * the next {@link #beforeAttributes} takes the shared lock rather than trust a view without
   * it — a directory delegated from here on answers unlinks at once.
   */
  private void wantedExclusive(long ino) {
    if (exclusiveWanted.size() > 4096) {
      exclusiveWanted.clear(); // a bound on memory: the view shows them a moment later anyway
    }
    exclusiveWanted.put(ino, System.nanoTime());
  }

  private boolean exclusiveComing(long ino) {
    Long at = exclusiveWanted.get(ino);
    if (at == null) {
      return false;
    }
    exclusiveWanted.remove(ino, at);
    return System.nanoTime() - at < EXCLUSIVE_COMING_NANOS;
  }

  /** See {@link io.etcfs.spi.vfs.Vfs#attributesEpoch}. */
  long attributesEpoch() {
    return attributesEpoch.get();
  }

  /**
   * See {@link io.etcfs.spi.vfs.Vfs#attributesCacheable}: under this node's lock; or with none,
   * if the cached fence shows no writer elsewhere with uncommitted changes and the backend's
   * view shows no other session holding or awaiting the lock exclusively (or only a holder whose
   * fence declares it clean); never with a backend that keeps no view. A writer that comes later raises its fence first, which the cache
   * watch tells ({@link #onEvents}). Asks nobody.
   */
  boolean attributesCacheable(long ino) {
    if (cacheGrant(ino) != 0) {
      return true;
    }
    HeldLock held = current.get(ino);
    if (held != null && provisional(held)) {
      // The create is queued here: no other node knows the file, so its attributes change only
      // through this node's kernel; adopted with the commit, or dropped with them (above).
      return !going.contains(held);
    }
    LockService s = attached;
    if (s == null || current.containsKey(ino)) {
      return false; // a lock held here but going, or its session lapsed: not now
    }
    try {
      io.etcfs.spi.fs.InodeFence fence = cachedFence(ino);
      if (dirtyElsewhere(fence)) {
        return false;
      }
      return switch (s.writerElsewhere(ino)) {
        case NONE -> true;
        case HOLDING -> fence != null && fence.clean();
        case WAITING, UNKNOWN -> false;
      };
    } catch (NoWait.WouldBlock e) {
      throw e; // asked again where the backend may read
    } catch (RuntimeException e) {
      return false;
    }
  }

  /** When a session ends, every lock held under it is gone: forget them. */
  private void watch(LockService s) {
    LockSession session = s.session();
    if (session != watched) {
      watched = session;
      session.done().thenRun(() -> current.values().removeIf(l -> {
        if (l.sessionId() != session.id()) {
          return false;
        }
        // lost, not let go: the kernel drops what it cached; nothing can be written back now
        fences.gone(l);
        attributesEpoch.incrementAndGet();
        ctx.notices.lockGoing(l.inode(), false);
        return true;
      }));
    }
  }
}

package io.etcfs.lock.etcd.internal;

import io.etcfs.spi.lease.LeaseReport;
import io.etcfs.spi.lock.CreateGrant;
import io.etcfs.spi.lock.HeldLock;
import io.etcfs.spi.lock.LockMode;
import io.etcfs.spi.lock.LockReport;
import io.etcfs.spi.lock.LockService;
import io.etcfs.spi.lock.LockSession;
import io.etcfs.spi.lock.LockTimeoutException;
import io.etcfs.spi.lock.RecallHandler;
import io.etcfs.spi.meta.Compare;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.MetaStoreException;
import io.etcfs.spi.meta.NoWait;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.RangeResult;
import io.etcfs.spi.meta.Txn;
import io.etcfs.spi.meta.TxnResult;
import io.etcfs.spi.meta.Watch;
import io.etcfs.spi.meta.WatchEvent;
import io.etcfs.spi.meta.WatchListener;
import java.lang.System.Logger.Level;
import java.lang.System.Logger;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * Inode locks held in etcd under a short lock-session lease.
 *
 * <p>A lock is a key {@code locks/<ino>/<lease>} put under this node's session lease, valued
 * {@code "S <node>"} or {@code "X <node>"}. Keys of one inode queue in create-revision order:
 * an exclusive request is granted when no key precedes it, a shared one when only shared keys
 * precede it — first come, first served, so a stream of readers cannot starve a writer. The key's
 * create revision is the fencing token; {@link #guards} compares it, so a commit made under a
 * lock that has since gone (session lapsed, lock released) is rejected by etcd.
 *
 * <p>One watch on {@code locks/} serves both sides: a waiter re-reads its inode's queue when it
 * changes, and a holder that sees a conflicting key queued behind its own is recalled — no
 * sooner than the minimum hold time after its grant — and releases once its recall handler has
 * flushed. Held locks stay cached after use until recalled, or until idle for a while.
 */
@Component(
    service = {LockService.class, LeaseReport.class, LockReport.class},
    configurationPid = EtcdLockService.PID,
    configurationPolicy = ConfigurationPolicy.REQUIRE,
    property = LockService.BACKEND + "=" + EtcdLockService.BACKEND_NAME)
@Designate(ocd = EtcdLockService.Config.class)
public final class EtcdLockService implements LockService, LeaseReport, LockReport,
    WatchListener {
  static final String PID = "io.etcfs.lock.etcd";
  static final String BACKEND_NAME = "etcd";
  private static final Logger LOG = System.getLogger(EtcdLockService.class.getName());
  /** A waiter repeats its request after this long without a change of its inode's queue. */
  private static final long NUDGE_NANOS = TimeUnit.SECONDS.toNanos(2);
  /** A holder asked again this long after a recall that has not ended is recalled again. */
  private static final long RECALL_AGAIN_NANOS = TimeUnit.SECONDS.toNanos(5);
  /**
   * Idle locks are given back by this many threads at a time, whatever their number. A node
   * that had unpacked 12,000 files once gave them all back at once, a thread and a transaction
   * each: etcd answered "too many requests", and the node's own keep-alive timed out, which
   * ended its lock session. Housekeeping must never cost the node its locks.
   */
  static final int IDLE_RELEASERS = 2;
  /**
   * The most inodes one {@link #prefetchShared} asks for: two operations each, and etcd's
   * default limit is 128 operations per transaction ({@code --max-txn-ops}).
   */
  static final int PREFETCH_MAX = 64;
  /**
   * The most idle locks one give-back transaction deletes (a compare and a delete each, within
   * etcd's 128 operations): after a {@code tar x} a node gives back thousands of locks, and one
   * transaction per lock was most of the etcd traffic it made.
   */
  static final int GIVE_BACK_MAX = 64;

  @ObjectClassDefinition(
      name = "etcfs lock backend: etcd",
      description = "Inode locks held in etcd under a short lock-session lease.")
  public @interface Config {
    @AttributeDefinition(description = "The filesystem's name: the first element of its keys.")
    String fsName();

    @AttributeDefinition(description = "This node's name, unique in the cluster.")
    String nodeName();

    @AttributeDefinition(
        description = "TTL of the lock-session lease; bounds the takeover of a dead node's locks.")
    int sessionTtlSeconds() default 2;

    @AttributeDefinition(
        description = "A lock is recalled no sooner than this after it was granted.")
    int minHoldMillis() default 50;

    @AttributeDefinition(description = "A cached lock unused for this long is given back.")
    int idleReleaseSeconds() default 30;

    @AttributeDefinition(description = "An exclusive lock declared clean at a close (nothing of"
        + " the file buffered) and unused for this long is made shared in place (or given back,"
        + " if the core cannot keep it so), so that readers elsewhere are granted at once"
        + " instead of recalling it.")
    int cleanReleaseMillis() default 1000;
  }

  /** An inode this node acquires or holds; gone when neither (so memory follows use). */
  private static final class InodeState {
    /** The revision of the newest change of the inode's queue the watch has shown. */
    final AtomicLong lastEvent = new AtomicLong();
    /** Acquires in progress (guarded by the map's compute). */
    int users;
    /** The request queued and not granted yet, for the shell: its mode (null: none). */
    volatile LockMode waiting;
    volatile long waitingSince;
    volatile long requestToken;
    /** A {@link #prefetchShared} owns the inode's request (guarded by the gate's monitor). */
    boolean prefetching;
  }

  /** One lock this node holds. */
  private static final class Held {
    final HeldLock lock;
    final Session session;
    final long grantedAt = System.nanoTime();
    volatile long lastUsed = System.nanoTime();
    volatile boolean recalling;
    /** The recall under way is only an idle give-back, queued behind others: see releaseIdle. */
    volatile boolean idleOnly;
    volatile long recalledAt;
    /** The recall was delivered: the lock is on its way out and never handed out again. */
    volatile boolean releasing;
    /** The core says nothing is buffered under it ({@link #clean(HeldLock, boolean)}). */
    volatile boolean clean;
    /** Given back with others in one transaction ({@link #giveBack}), not by {@link #release}. */
    volatile boolean batched;
    /**
     * Being made shared in place ({@link #downgrade}); {@link #dirty} refuses it meanwhile
     * (guarded by this object's monitor).
     */
    volatile boolean demoting;
    /** Conflicting requests (by fencing token) seen queued behind this lock, for the shell. */
    final Set<Long> waiters = ConcurrentHashMap.newKeySet();

    Held(HeldLock lock, Session session) {
      this.lock = lock;
      this.session = session;
    }
  }

  private final MetaStore store;
  /** {@link #store}, counting: the lock service's etcd round trips, for the shell. */
  private final StoreCounts counts;
  private final String fsName;
  private final String nodeName;
  private final Duration sessionTtl;
  private final long minHoldNanos;
  private final long idleNanos;
  private final long cleanIdleNanos;
  private final LockKeys codec;
  private final Map<Long, Held> held = new ConcurrentHashMap<>();
  /** Every lock key of the filesystem, from the watch (for {@link #writerElsewhere}). */
  private final LockView table = new LockView();
  /** The newest revision the watch has shown: its start's full read, then each event's. */
  private final AtomicLong applied = new AtomicLong();
  /**
   * Per inode, the revision at which this node last gave its lock back (the most recent 4096
   * inodes). Whatever request made it give the lock back is older, so until the watch has shown
   * that revision the table may not show that request yet: {@link #writerElsewhere} says a
   * writer waits.
   */
  private final Recent releasedAt = new Recent(4096);
  /** Inodes being acquired or held here: their request gate and newest queue event. */
  private final Map<Long, InodeState> inodes = new ConcurrentHashMap<>();
  /** Bumped each time the watch (re)starts: waiters then read their queue again. */
  private volatile long restarts;
  private final Object changed = new Object();
  private final ScheduledExecutorService timer;
  private final ExecutorService recalls;
  private final ExecutorService idleReleases;
  private final AtomicLong recallsServed = new AtomicLong();
  /** Exclusive locks made shared in place ({@link #downgrade}). */
  private final AtomicLong downgrades = new AtomicLong();
  private final RecallCounts recallsByInode = new RecallCounts();
  private volatile RecallHandler recallHandler;
  /** Told of another session's exclusive key ({@link #watchExclusive}). */
  private volatile java.util.function.LongConsumer exclusiveListener;
  private volatile Session session;
  private volatile Watch watch;
  private volatile boolean closed;

  @Activate
  public EtcdLockService(@Reference(name = "metaStore") MetaStore store, Config config) {
    this.counts = new StoreCounts(Objects.requireNonNull(store, "store"));
    this.store = counts;
    this.fsName = required("fsName", config.fsName());
    this.nodeName = required("nodeName", config.nodeName());
    this.sessionTtl = sessionTtl(config.sessionTtlSeconds());
    if (config.minHoldMillis() < 0 || config.idleReleaseSeconds() < 1
        || config.cleanReleaseMillis() < 1) {
      throw new IllegalArgumentException(PID + ": minHoldMillis must be at least 0,"
          + " idleReleaseSeconds and cleanReleaseMillis at least 1");
    }
    this.minHoldNanos = TimeUnit.MILLISECONDS.toNanos(config.minHoldMillis());
    this.idleNanos = TimeUnit.SECONDS.toNanos(config.idleReleaseSeconds());
    this.cleanIdleNanos = Math.min(idleNanos,
        TimeUnit.MILLISECONDS.toNanos(config.cleanReleaseMillis()));
    this.codec = new LockKeys(fsName, nodeName);
    this.timer = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "etcfs-locks-timer"));
    this.recalls = Executors.newCachedThreadPool(r -> daemon(r, "etcfs-locks-recall"));
    this.idleReleases = Executors.newFixedThreadPool(IDLE_RELEASERS,
        r -> daemon(r, "etcfs-locks-idle"));
    startWatch();
    long check = Math.max(1, cleanIdleNanos / 4);
    timer.scheduleWithFixedDelay(this::releaseIdle, check, check, TimeUnit.NANOSECONDS);
  }

  @Override
  public String backend() {
    return BACKEND_NAME;
  }

  @Override
  public LockSession session() {
    synchronized (this) {
      Session s = session;
      if (s == null || s.isExpired()) {
        checkOpen();
        s = Session.open(store, sessionTtl, "etcfs-locks-" + nodeName, this::sessionEnded);
        session = s;
      }
      return s;
    }
  }

  @Override
  public HeldLock acquire(long inode, LockMode mode, Duration timeout)
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
        checkOpen();
        Session s = (Session) session();
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
          release(h.lock); // an upgrade queues again, behind whoever is waiting
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

  /**
   * One transaction for every candidate: this session's shared request put and the inode's
   * queue read back, as {@link #queueAndWait} does for one inode. Candidates are inodes with no
   * gate here (neither held nor being acquired; their gates are claimed until this is done, so
   * an acquire arriving meanwhile waits for it) and no exclusive request in the lock table. A
   * request the queue shows behind an exclusive one after all (the table trailed etcd) is
   * withdrawn at once; its holder may have seen it and give the lock back once, which is the
   * whole cost of that race. A granted request is recorded as {@link #adoptCreated} records
   * a created lock: under the table's monitor, so any conflicting request the watch shows
   * recalls it.
   */
  @Override
  public List<HeldLock> prefetchShared(Collection<Long> candidates) {
    checkOpen();
    Session s = (Session) session();
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
        request.then(Op.put(key(inode, s.lease), value(LockMode.SHARED), s.lease))
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
        String mine = str(key(inode, s.lease));
        KeyValue kv = keys.stream().filter(k -> k.keyString().equals(mine)).findFirst()
            .orElse(null);
        if (kv == null) {
          continue; // the session's lease ended: the key went with it
        }
        if (!granted(keys, kv, LockMode.SHARED)) {
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
          recall(h, wanted.mode());
        } else {
          recallIfWanted(h, keys);
        }
      }
      if (s.isExpired() || session != s) {
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
    inodes.forEach(inode -> delete.then(Op.delete(key(inode, s.lease))));
    try {
      store.commit(delete);
    } catch (MetaStoreException e) {
      LOG.log(Level.WARNING, "could not withdraw {0} shared lock requests {1}: {2}; they go"
          + " with lock session {3}, or when another node asks", inodes.size(), why,
          e.getMessage(), Long.toHexString(s.lease));
    }
  }

  /** Puts this session's key for {@code inode} and waits for the grant; null if the key went. */
  private HeldLock queueAndWait(InodeState gate, Session s, long inode, LockMode mode,
      long deadline)
      throws LockTimeoutException {
    byte[] key = key(inode, s.lease);
    byte[] value = value(mode);
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
    long firstEpoch = restarts;
    while (true) {
      long epoch = restarts;
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
        recallIfWanted(h, keys);
        if (gate.lastEvent.get() > queue.revision() || restarts != epoch) {
          // A request newer than the read above may have been seen by the watch before this
          // grant was recorded (the watch then had no holder to recall): look again.
          recallIfWanted(h, store.prefix(codec.inode(inode), 0).kvs());
        }
        return lock;
      }
      long round = Math.min(deadline, System.nanoTime() + NUDGE_NANOS);
      if (!awaitChange(gate, queue.revision(), epoch, round)) {
        if (System.nanoTime() - deadline >= 0) {
          abandon(key, token);
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
    if (restarts != firstEpoch) {
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
    if (!waitFor(() -> held.get(h.lock.inode()) != h, deadline)) {
      throw new LockTimeoutException(Thread.currentThread().isInterrupted() ? "interrupted"
          : "lock on inode " + Long.toHexString(h.lock.inode()) + " is still being given back");
    }
  }

  /** Waits until the change of {@code h} to a shared lock applied or was given up. */
  private void awaitDemoted(Held h, long deadline) throws LockTimeoutException {
    if (!waitFor(() -> held.get(h.lock.inode()) != h || !h.demoting, deadline)) {
      throw new LockTimeoutException(Thread.currentThread().isInterrupted() ? "interrupted"
          : "lock on inode " + Long.toHexString(h.lock.inode()) + " is still being made shared");
    }
  }

  /**
   * Waits, woken by every batch the watch applies, until {@code done} holds; false at the
   * deadline, once closed, or when interrupted (the interrupt flag set again).
   */
  private boolean waitFor(java.util.function.BooleanSupplier done, long deadline) {
    synchronized (changed) {
      while (!done.getAsBoolean()) {
        NoWait.check();
        long left = deadline - System.nanoTime();
        if (left <= 0 || closed) {
          return false;
        }
        try {
          TimeUnit.NANOSECONDS.timedWait(changed, left);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return false;
        }
      }
      return true;
    }
  }

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
    return waitFor(() -> gate.lastEvent.get() > revision || restarts != epoch, deadline);
  }

  /** Gives up a place in the queue (a timed-out request), unless it was granted meanwhile. */
  private void abandon(byte[] key, long token) {
    try {
      store.commit(new Txn().when(Compare.createRevision(key, token)).then(Op.delete(key)));
    } catch (MetaStoreException e) {
      LOG.log(Level.WARNING, "could not withdraw lock request {0}: {1}", str(key),
          e.getMessage());
    }
  }

  @Override
  public void release(HeldLock lock) {
    Held h = held.get(lock.inode());
    if (h == null || !h.lock.equals(lock) || h.batched || !held.remove(lock.inode(), h)) {
      return; // gone already, or its give-back's batch deletes it (see giveBack)
    }
    inodes.computeIfPresent(lock.inode(), (i, st) -> st.users == 0 ? null : st);
    wakeAll();
    // Before the delete: the node waiting for this lock may be granted, and its write()
    // return, before this commit's answer is back here.
    releasedAt.put(lock.inode(), Long.MAX_VALUE);
    deleteKey(lock);
  }

  /** Deletes the key of a lock no longer held here, under the compare of its fencing token. */
  private void deleteKey(HeldLock lock) {
    byte[] key = key(lock.inode(), lock.sessionId());
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
   * The lock key {@code "X <node>"} under this session's lease, put by the transaction that
   * creates the inode: its create revision, that transaction's, is the fencing token, and
   * every node's watch sees it as it sees any request. Nobody can have queued for an inode that
   * did not exist, so the key is first in line: granted. The absent-compare makes that create
   * revision provably the transaction's own.
   */
  @Override
  public CreateGrant createGrant(long inode) {
    checkOpen();
    Session s = (Session) session();
    byte[] key = key(inode, s.lease);
    return new CreateGrant(inode, s.lease, List.of(Compare.absent(key)),
        List.of(Op.put(key, value(LockMode.EXCLUSIVE), s.lease)));
  }

  /**
   * Records the created lock as held, as {@link #queueAndWait} records a grant. If the session
   * the key was put under is no longer this node's live session, the key went (or goes) with
   * that session's lease, and nothing is held.
   */
  @Override
  public HeldLock adoptCreated(CreateGrant grant, long revision) {
    long inode = grant.inode();
    Session s = session;
    if (closed || s == null || s.lease != grant.sessionId() || s.isExpired()) {
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
    if (s.isExpired() || session != s) {
      // The session ended while the lock was being recorded: sessionEnded may have missed it.
      held.remove(inode, h);
      inodes.computeIfPresent(inode, (i, st) -> st.users == 0 ? null : st);
      return null;
    }
    if (wanted != null) {
      h.waiters.add(wanted.createRevision());
      recall(h, wanted.mode());
    }
    return lock;
  }

  /** Deletes the key the grant may have put; it goes with the session's lease otherwise. */
  @Override
  public void abandonCreated(CreateGrant grant) {
    Held h = held.get(grant.inode());
    if (h != null && h.lock.sessionId() == grant.sessionId()) {
      return; // adopted or acquired since: the key is that lock's
    }
    byte[] key = key(grant.inode(), grant.sessionId());
    try {
      store.commit(new Txn().then(Op.delete(key)));
    } catch (MetaStoreException e) {
      LOG.log(Level.WARNING, "could not remove lock key {0} of a create whose outcome is"
          + " unknown ({1}); it goes with lock session {2}", str(key), e.getMessage(),
          Long.toHexString(grant.sessionId()));
    }
  }

  @Override
  public void setRecallHandler(RecallHandler handler) {
    recallHandler = Objects.requireNonNull(handler, "handler");
  }

  /** Locks held now, for the shell. */
  public List<HeldLock> heldLocks() {
    return held.values().stream().map(h -> h.lock).toList();
  }

  /** This service's etcd round-trip counters, for tests. */
  StoreCounts counts() {
    return counts;
  }

  /** This service's etcd round trips since it started, for the shell. */
  String roundTrips() {
    return counts.toString();
  }

  /** Recalls served by this node since it started (idle give-backs included). */
  public long recallsServed() {
    return recallsServed.get();
  }

  /** This node's locks, held and awaited, by inode (for the shell's {@code locks}). */
  @Override
  public List<LockState> locks() {
    long now = System.nanoTime();
    List<LockState> rows = new ArrayList<>();
    for (Held h : held.values()) {
      rows.add(new LockState(h.lock.inode(), h.lock.mode(),
          h.recalling ? LockReport.State.RECALL_PENDING : LockReport.State.HELD, h.clean,
          h.lock.fencingToken(), Duration.ofNanos(now - h.grantedAt), h.waiters.size(),
          recallsByInode.of(h.lock.inode())));
    }
    inodes.forEach((inode, st) -> {
      LockMode waiting = st.waiting;
      if (waiting != null) {
        rows.add(new LockState(inode, waiting, LockReport.State.WAITING, false,
            st.requestToken, Duration.ofNanos(now - st.waitingSince), -1,
            recallsByInode.of(inode)));
      }
    });
    rows.sort(Comparator.comparingLong(LockState::inode));
    return rows;
  }

  @Override
  public Map<String, String> counters() {
    Map<String, String> c = new LinkedHashMap<>();
    c.put("recalls served by this node", Long.toString(recallsServed()));
    c.put("etcd round trips", roundTrips());
    c.put("recalls per inode counted for", "the " + RecallCounts.CAPACITY
        + " inodes recalled last");
    return c;
  }

  /** Every lock key in etcd, read now. */
  @Override
  public Optional<List<ClusterLock>> cluster() {
    return Optional.of(LockRows.all(codec, store.prefix(codec.all(), 0).kvs()));
  }

  /** Recalls served for one inode, while it is among the most recently recalled. */
  long recallsServed(long inode) {
    return recallsByInode.of(inode);
  }

  String prefix() {
    return codec.prefix();
  }

  /** How many lock keys of {@code inode} this node's watch has shown, for tests. */
  int queuedInTable(long inode) {
    return table.queued(inode);
  }

  /** Inodes this node keeps state for (acquiring or holding), for tests of memory use. */
  int trackedInodes() {
    return inodes.size();
  }

  // ---- the watch: waiters and recalls ----

  private void startWatch() {
    if (closed) {
      return;
    }
    try {
      byte[] p = codec.all();
      // The whole lock table at one revision, then every change after it: what
      // writerElsewhere answers from. Lock keys are few (one per lock held or awaited in
      // the cluster; idle locks are given back), so the read is small.
      RangeResult all = store.prefix(p, 0);
      synchronized (table) {
        table.rebuild();
        for (KeyValue kv : all.kvs()) {
          LockKeys.Parts il = codec.parse(kv.keyString());
          if (il != null) {
            LockView.Request r = request(il.lease(), kv);
            table.put(il.inode(), r);
            // what a writer did while no watch ran shows through the metadata watch; one
            // writing now is told as its key would have been
            tellExclusive(il.inode(), il.lease(), r);
          }
        }
      }
      long now = all.revision();
      applied.accumulateAndGet(now, Math::max);
      watch = store.watch(p, now + 1, this);
      // Whatever happened while no watch ran: every waiter reads its queue again, and every
      // holder looks for conflicting requests queued behind it.
      restarts++;
      wakeAll();
      for (Held h : held.values()) {
        RangeResult queue = store.prefix(codec.inode(h.lock.inode()), 0);
        recallIfWanted(h, queue.kvs());
      }
    } catch (MetaStoreException e) {
      LOG.log(Level.WARNING, "lock watch not running ({0}); retrying", e.getMessage());
      timer.schedule(this::startWatch, 200, TimeUnit.MILLISECONDS);
    }
  }

  @Override
  public void onEvents(List<WatchEvent> events) {
    long newest = 0;
    for (WatchEvent e : events) {
      newest = Math.max(newest, e.kv().modRevision());
      LockKeys.Parts il = codec.parse(e.kv().keyString());
      if (il == null) {
        continue;
      }
      long inode = il.inode();
      long lease = il.lease();
      if (e.type() == WatchEvent.Type.DELETE) {
        table.delete(inode, lease);
      } else {
        LockView.Request r = request(lease, e.kv());
        table.put(inode, r);
        tellExclusive(inode, lease, r);
      }
      InodeState state = inodes.get(inode);
      if (state != null) {
        state.lastEvent.accumulateAndGet(e.kv().modRevision(), Math::max);
      }
      Held h = held.get(inode);
      if (h == null) {
        if (e.type() == WatchEvent.Type.PUT && state == null
            && mode(e.kv()) == LockMode.EXCLUSIVE) {
          dropStray(inode);
        }
        continue;
      }
      if (lease == h.lock.sessionId()) {
        // A delete older than the lock's own key is of an earlier key of this session (one a
        // new request replaced: see queueAndWait), not of this lock's: the key came after it.
        if (e.type() == WatchEvent.Type.DELETE && e.kv().modRevision() > h.lock.fencingToken()
            && held.remove(inode, h)) {
          LOG.log(Level.WARNING, "lock on inode {0} vanished (its session lease ended)",
              Long.toHexString(inode));
        }
      } else if (e.type() == WatchEvent.Type.PUT
          && e.kv().createRevision() > h.lock.fencingToken()
          && mode(e.kv()).conflictsWith(h.lock.mode())) {
        h.waiters.add(e.kv().createRevision());
        recall(h, mode(e.kv()));
      }
    }
    // Only now, with the table showing these events: awaitView and attributesFrom take a
    // revision here as a promise about the table.
    applied.accumulateAndGet(newest, Math::max);
    wakeAll();
  }

  /**
   * Another session's exclusive key: a writer that may buffer changes. Told before {@link
   * #applied} shows the event (so before {@link #writerElsewhere} answers from it).
   */
  private void tellExclusive(long inode, long lease, LockView.Request r) {
    java.util.function.LongConsumer listener = exclusiveListener;
    Session s = session;
    if (listener == null || r.mode() != LockMode.EXCLUSIVE || (s != null && s.lease == lease)) {
      return;
    }
    try {
      listener.accept(inode);
    } catch (RuntimeException e) {
      LOG.log(Level.ERROR, "exclusive-lock listener failed for inode "
          + Long.toHexString(inode), e);
    }
  }

  @Override
  public boolean watchExclusive(java.util.function.LongConsumer listener) {
    exclusiveListener = listener;
    return true;
  }

  /**
   * A shared request of this session on an inode this node neither holds nor is acquiring,
   * which an exclusive request now waits behind, is a stray: left by a request or prefetch whose
   * transaction's outcome was unknown and whose withdrawal failed too. Nobody would ever recall
   * it, so the writer would wait until the session ends; it is deleted instead (guarded by its
   * create revision, so a request of the same key made meanwhile stays). Exclusive keys are
   * left alone: a created lock's key is not adopted yet in the moment after its create.
   */
  private void dropStray(long inode) {
    Session s = session;
    LockView.Request mine = s == null ? null : table.request(inode, s.lease);
    if (mine == null || mine.mode() != LockMode.SHARED) {
      return;
    }
    byte[] key = key(inode, s.lease);
    LOG.log(Level.INFO, "dropping stray shared lock request {0}", str(key));
    recalls.execute(() -> abandon(key, mine.createRevision()));
  }

  /** Waits for the watch to have applied {@code revision}: woken by each batch it applies. */
  boolean awaitApplied(long revision, long timeoutMs) {
    return applied.get() >= revision || waitFor(() -> applied.get() >= revision,
        System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs));
  }

  @Override
  public void onError(MetaStoreException error) {
    if (!closed) {
      LOG.log(Level.WARNING, "lock watch ended ({0}); restarting", error.getMessage());
      timer.schedule(this::startWatch, 50, TimeUnit.MILLISECONDS);
    }
  }

  private static LockView.Request request(long lease, KeyValue kv) {
    return new LockView.Request(lease, kv.createRevision(), mode(kv), kv.modRevision());
  }

  /**
   * From the lock table this node's watch keeps: another session's exclusive request, granted
   * (first in line) or waiting. It trails etcd by the watch's delay (normally well under a
   * millisecond); while the watch is down it answers from the table as it last was. Waiting also
   * while this node is giving or just gave the lock back for a request its watch has not shown
   * yet (a writer's, whose write() may return at any moment). Asks nobody.
   */
  @Override
  public Writer writerElsewhere(long inode) {
    if (applied.get() < releasedAt.get(inode, 0)) {
      return Writer.WAITING;
    }
    Session s = session;
    return table.writerElsewhere(inode, s == null ? 0 : s.id());
  }

  /**
   * The core's hint (lock 3.0): a clean exclusive lock is given back sooner when idle, and may be
   * made shared in place ({@link #claimDemote}); a close counts as its last use.
   */
  @Override
  public void clean(HeldLock lock, boolean clean) {
    Held h = held.get(lock.inode());
    if (lock.mode() != LockMode.EXCLUSIVE || h == null || !h.lock.equals(lock)) {
      return;
    }
    synchronized (h) {
      h.clean = clean;
      if (clean) {
        h.lastUsed = System.nanoTime();
      }
    }
  }

  private void recallIfWanted(Held h, List<KeyValue> queue) {
    for (KeyValue kv : queue) {
      if (kv.createRevision() > h.lock.fencingToken()
          && mode(kv).conflictsWith(h.lock.mode())) {
        h.waiters.add(kv.createRevision());
        recall(h, mode(kv));
        return;
      }
    }
  }

  /** Delivers a recall once, after the minimum hold time. */
  private void recall(Held h, LockMode wanted) {
    long now = System.nanoTime();
    if (h.recalling && !h.idleOnly && now - h.recalledAt < RECALL_AGAIN_NANOS) {
      return;
    }
    if (h.recalling && !h.idleOnly) {
      LOG.log(Level.WARNING, "lock on inode {0} asked for again; recalling it again",
          Long.toHexString(h.lock.inode()));
    }
    // A request that conflicts overtakes an idle give-back still queued: deliver runs once.
    h.idleOnly = false;
    h.recalling = true;
    h.recalledAt = now;
    long delay = Math.max(0, h.grantedAt + minHoldNanos - System.nanoTime());
    timer.schedule(() -> recalls.execute(() -> deliver(h, wanted)), delay, TimeUnit.NANOSECONDS);
  }

  /**
   * A recall: the lock is handed over, whatever the mode wanted. (Answering a reader's recall of
   * a clean exclusive lock by making it shared, as an idle one is, was tried on 2026-12-02 and
   * made CoherenceIT fail 3 runs in 5 — a read of zeros on the other node, a time set there
   * lost — for a cause not found yet; it is not done.)
   */
  private void deliver(Held h, LockMode wanted) {
    if (!claim(h, false)) {
      return;
    }
    try {
      handOver(h, wanted);
    } finally {
      release(h.lock);
    }
  }

  /**
   * Marks {@code h} releasing if it is still to be let go: held, not being released already, and
   * — for a give-back ({@code idle}: only while no real recall took it over) — still idle; a
   * give-back queued for a lock used again meanwhile is called off.
   */
  private boolean claim(Held h, boolean idleBatch) {
    synchronized (h) {
      if (held.get(h.lock.inode()) != h || h.releasing || (idleBatch && !h.idleOnly)) {
        return false; // released, being released, or recalled for real: on the recall path
      }
      if (h.idleOnly && !idle(h, System.nanoTime())) {
        h.idleOnly = false; // used again while its give-back was queued: keep it
        h.recalling = false;
        return false;
      }
      h.releasing = true;
      h.batched = idleBatch;
      return true;
    }
  }

  /** The recall handler's flush of a lock being let go, counted; its failure is only logged. */
  private void handOver(Held h, LockMode wanted) {
    RecallHandler handler = recallHandler;
    try {
      if (handler != null) {
        handler.recall(h.lock, wanted);
      }
    } catch (RuntimeException e) {
      LOG.log(Level.ERROR, "recall handler failed for inode " + Long.toHexString(h.lock.inode())
          + "; releasing the lock anyway", e);
    } finally {
      recallsServed.incrementAndGet();
      recallsByInode.served(h.lock.inode());
    }
  }

  /** Whether {@code h} has been unused long enough to be given back. */
  private boolean idle(Held h, long now) {
    return now - h.lastUsed > (h.clean ? cleanIdleNanos : idleNanos);
  }

  /**
   * Queues every idle lock for a give-back on {@link #IDLE_RELEASERS} threads, in batches of
   * {@link #GIVE_BACK_MAX}. One that is recalled for real meanwhile is delivered at once, on the
   * recall path.
   */
  private void releaseIdle() {
    long now = System.nanoTime();
    List<Held> batch = new ArrayList<>();
    for (Held h : held.values()) {
      if (!h.recalling && idle(h, now)) {
        h.idleOnly = true;
        h.recalledAt = now;
        h.recalling = true;
        batch.add(h);
        if (batch.size() == GIVE_BACK_MAX) {
          List<Held> full = batch;
          idleReleases.execute(() -> deliverIdle(full));
          batch = new ArrayList<>();
        }
      }
    }
    if (!batch.isEmpty()) {
      List<Held> last = batch;
      idleReleases.execute(() -> deliverIdle(last));
    }
  }

  /**
   * Gives back a batch of idle locks: each one still idle and not being released is marked
   * releasing, its recall handler runs (for an idle lock, normally nothing to flush; the
   * kernel's caches of the file are dropped), and then all are deleted in one transaction.
   */
  private void deliverIdle(List<Held> batch) {
    List<Held> going = new ArrayList<>();
    List<Held> demoting = new ArrayList<>();
    for (Held h : batch) {
      if (claim(h, true)) {
        (claimDemote(h) && downgrading(h) ? demoting : going).add(h);
      }
    }
    for (Held h : downgrade(demoting)) {
      keep(h); // the change did not apply: held exclusively as before, tried again later
    }
    going.forEach(h -> {
      synchronized (h) {
        h.demoting = false;
      }
    });
    if (going.isEmpty()) {
      return;
    }
    try {
      going.forEach(h -> handOver(h, LockMode.EXCLUSIVE));
    } finally {
      giveBack(going);
    }
  }

  /**
   * Marks a claimed lock to be made shared if it is exclusive and clean (the core's hint); the
   * core's agreement ({@link #downgrading(Held)}) is what makes it safe.
   */
  private boolean claimDemote(Held h) {
    synchronized (h) {
      if (h.lock.mode() != LockMode.EXCLUSIVE || !h.clean) {
        return false;
      }
      h.demoting = true;
      return true;
    }
  }

  /** Whether the core agrees to keep {@code h} shared (it has nothing of the file buffered). */
  private boolean downgrading(Held h) {
    RecallHandler handler = recallHandler;
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
  private List<Held> downgrade(List<Held> demoting) {
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
      byte[] key = key(h.lock.inode(), h.lock.sessionId());
      t.when(Compare.createRevision(key, h.lock.fencingToken()))
          .when(Compare.value(key, value(LockMode.EXCLUSIVE)))
          .then(Op.put(key, value(LockMode.SHARED), h.lock.sessionId()));
    }
    return t;
  }

  /** One lock's change alone; if its compares fail, whether the key is shared already. */
  private boolean demotedAlone(Held h) {
    byte[] key = key(h.lock.inode(), h.lock.sessionId());
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
    wakeAll();
    if (wanted != null) {
      now.waiters.add(wanted.createRevision());
      recall(now, wanted.mode());
    }
  }

  /** A claimed lock whose change did not apply: held exclusively as before. */
  private void keep(Held h) {
    synchronized (h) {
      h.demoting = false;
      h.releasing = false;
      h.batched = false;
      h.recalling = false;
      h.idleOnly = false;
      h.lastUsed = System.nanoTime(); // not again at once
    }
    tellDowngraded(h.lock, h.lock);
    wakeAll();
    LockView.Request wanted = table.firstConflict(h.lock.inode(), h.lock.fencingToken(),
        LockMode.EXCLUSIVE);
    if (wanted != null) {
      recall(h, wanted.mode());
    }
  }

  private void tellDowngraded(HeldLock from, HeldLock to) {
    RecallHandler handler = recallHandler;
    try {
      if (handler != null) {
        handler.downgraded(from, to);
      }
    } catch (RuntimeException e) {
      LOG.log(Level.ERROR, "recall handler failed for inode " + Long.toHexString(from.inode())
          + " after a downgrade", e);
    }
  }

  /** Exclusive locks this node has made shared in place since it started, for the shell. */
  public long downgrades() {
    return downgrades.get();
  }

  /**
   * Releases {@code going} as {@link #release} releases one lock, with one transaction for all:
   * each key deleted under the compare of its fencing token. If any compare fails (a session
   * ended, a key went), nothing of that transaction applied, and each key is released alone.
   */
  private void giveBack(List<Held> going) {
    Txn delete = new Txn();
    for (Held h : going) {
      held.remove(h.lock.inode(), h);
      inodes.computeIfPresent(h.lock.inode(), (i, st) -> st.users == 0 ? null : st);
      // Before the delete, as in release: a waiter elsewhere may be granted before it answers.
      releasedAt.put(h.lock.inode(), Long.MAX_VALUE);
      byte[] key = key(h.lock.inode(), h.lock.sessionId());
      delete.when(Compare.createRevision(key, h.lock.fencingToken())).then(Op.delete(key));
    }
    wakeAll();
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

  private void sessionEnded(Session s, String reason) {
    LOG.log(Level.WARNING, "lock session {0} of {1} ended: {2}", Long.toHexString(s.lease),
        nodeName, reason);
    held.values().removeIf(h -> h.session == s);
    wakeAll();
  }

  private void wakeAll() {
    synchronized (changed) {
      changed.notifyAll();
    }
  }

  /** The lock session's lease, while there is a live session. */
  @Override
  public java.util.List<LeaseReport.Lease> leases() {
    Session s = session;
    return s == null || s.isExpired() ? java.util.List.of() : java.util.List.of(s.report());
  }

  @Deactivate
  void deactivate() {
    closed = true;
    Watch w = watch;
    if (w != null) {
      w.close();
    }
    wakeAll();
    timer.shutdownNow();
    recalls.shutdownNow();
    idleReleases.shutdownNow();
    Session s = session;
    if (s != null) {
      s.close(); // revoking the lease deletes every lock key at once
    }
    held.clear();
  }

  /** Stops as a crashed node would: nothing released, the session's lease left to run out. */
  void halt() {
    closed = true;
    Watch w = watch;
    if (w != null) {
      w.close();
    }
    wakeAll();
    timer.shutdownNow();
    recalls.shutdownNow();
    idleReleases.shutdownNow();
    Session s = session;
    if (s != null) {
      s.halt();
    }
  }

  private void checkOpen() {
    if (closed) {
      throw new IllegalStateException("the etcd lock service of " + nodeName + " is stopped");
    }
  }

  private byte[] key(long inode, long lease) {
    return codec.key(inode, lease);
  }

  private byte[] value(LockMode mode) {
    return codec.value(mode);
  }

  static LockMode mode(KeyValue kv) {
    return LockKeys.mode(kv);
  }

  private static String str(byte[] key) {
    return LockKeys.str(key);
  }

  @Override
  public String toString() {
    return "etcd locks of " + fsName + " for " + nodeName + " on " + store.describe();
  }

  Duration sessionTtl() {
    return sessionTtl;
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }

  private static String required(String name, String value) {
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException(PID + ": " + name + " is not set");
    }
    return value;
  }

  private static Duration sessionTtl(int seconds) {
    if (seconds < 1) {
      throw new IllegalArgumentException(
          PID + ": sessionTtlSeconds must be at least 1, was " + seconds);
    }
    return Duration.ofSeconds(seconds);
  }
}

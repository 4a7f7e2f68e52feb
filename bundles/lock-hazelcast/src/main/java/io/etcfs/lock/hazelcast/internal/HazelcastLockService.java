package io.etcfs.lock.hazelcast.internal;

import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import io.etcfs.spi.fs.Keyspace;
import io.etcfs.spi.lock.HeldLock;
import io.etcfs.spi.lock.LockMode;
import io.etcfs.spi.lock.LockReport;
import io.etcfs.spi.lock.LockService;
import io.etcfs.spi.lock.LockSession;
import io.etcfs.spi.lock.LockTimeoutException;
import io.etcfs.spi.lock.RecallHandler;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.NoWait;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * Inode locks on Hazelcast members embedded in the nodes: the lock backend that arbitrates
 * without etcd (3.0: the core's inode fence in etcd keeps data safe whatever a backend grants).
 *
 * <p>Each inode's queue is one entry of the map {@value #LOCKS}, changed only by entry
 * processors on its partition owner ({@link LockQueue}, {@link Processors}): FIFO, shared
 * requests together, an exclusive one alone, a fencing token per grant. Every node listens to
 * the map's events: a waiter is woken by a change of its inode's queue, a holder that sees a
 * conflicting request behind its own is recalled (no sooner than the minimum hold time after its
 * grant) and releases once its recall handler has flushed, and the same events feed the view
 * {@link #writerElsewhere} answers from. Locks stay cached after use until recalled or idle.
 *
 * <p>Liveness: a lock session is an entry of {@value #SESSIONS} with a time to live that its node
 * renews ({@link HzSession}). A waiter blocked by a request whose session entry is gone drops
 * that session's requests from the queue; the oldest member sweeps them from every queue. So a
 * dead node's locks are free one session TTL (plus at most the 1 s grain of Hazelcast's
 * expiry) after its last renewal, whatever Hazelcast's own failure detection (tuned down in
 * {@link HazelcastMember}) takes to remove its member.
 *
 * <p>Deliberately a delayed component (the default for a service): SCR activates it only when a
 * consumer gets the service, so no member starts, opens a port or looks for peers unless the
 * core selects this backend.
 */
@Component(
    service = {LockService.class, LockReport.class},
    configurationPid = HazelcastLockService.PID,
    configurationPolicy = ConfigurationPolicy.REQUIRE,
    property = LockService.BACKEND + "=" + HazelcastLockService.BACKEND_NAME)
@Designate(ocd = HazelcastLockService.Config.class)
public final class HazelcastLockService implements LockService, LockReport {
  static final String PID = "io.etcfs.lock.hazelcast";
  static final String BACKEND_NAME = "hazelcast";
  static final String LOCKS = "etcfs-locks";
  static final String SESSIONS = "etcfs-sessions";
  private static final Logger LOG = System.getLogger(HazelcastLockService.class.getName());
  private static final Duration STOP_WAIT = Duration.ofSeconds(30);
  /**
   * A waiter with no news of its queue for this long reads it again and checks that the
   * sessions ahead of it are alive: what bounds a dead holder's takeover past its session TTL.
   */
  private static final long NUDGE_NANOS = TimeUnit.MILLISECONDS.toNanos(250);
  /** A holder asked again this long after a recall that has not ended is recalled again. */
  private static final long RECALL_AGAIN_NANOS = TimeUnit.SECONDS.toNanos(5);
  /** A recall handler slower than this is logged: this node's calls for the lock wait on it. */
  private static final long SLOW_RECALL_NANOS = TimeUnit.SECONDS.toNanos(5);
  /** How often the oldest member sweeps dead sessions' requests out of every queue. */
  private static final long SWEEP_SECONDS = 5;

  @ObjectClassDefinition(
      name = "etcfs lock backend: Hazelcast",
      description = "Inode locks on a Hazelcast cluster embedded in the nodes.")
  public @interface Config {
    @AttributeDefinition(description = "The filesystem's name; the cluster is etcfs-<fsName>.")
    String fsName();

    @AttributeDefinition(description = "This node's name, unique in the cluster.")
    String nodeName();

    @AttributeDefinition(description = "The address this node's member binds and is reached"
        + " at by the others (registered in etcd for them).")
    String address() default "127.0.0.1";

    @AttributeDefinition(description = "The port this node's member listens on; 0 picks a free"
        + " one (several nodes on one host).")
    int port() default 0;

    @AttributeDefinition(
        description = "TTL of the lock session; bounds the takeover of a dead node's locks.")
    int sessionTtlSeconds() default 2;

    @AttributeDefinition(
        description = "A lock is recalled no sooner than this after it was granted.")
    int minHoldMillis() default 50;

    @AttributeDefinition(description = "A cached lock unused for this long is given back.")
    int idleReleaseSeconds() default 30;

    @AttributeDefinition(description = "An exclusive lock declared clean at a close and unused"
        + " for this long is given back, so that readers elsewhere are granted at once.")
    int cleanReleaseMillis() default 1000;

    @AttributeDefinition(description = "How long the start waits for this member to join"
        + " the others before the node fails to start.")
    int startTimeoutSeconds() default 60;
  }

  /** An inode this node acquires or holds: its request gate and the news of its queue. */
  private static final class Gate {
    int users;
    /** Bumped by each event of the inode's queue (guarded by {@link #signal}). */
    long version;
    final Object signal = new Object();
    volatile LockMode waiting;
    volatile long waitingSince;
  }

  /** One lock this node holds. */
  private static final class Held {
    final HeldLock lock;
    final HzSession session;
    final long grantedAt = System.nanoTime();
    volatile long lastUsed = System.nanoTime();
    volatile boolean recalling;
    volatile long recalledAt;
    /** The recall was delivered: the lock is on its way out and never handed out again. */
    volatile boolean releasing;
    /** When the recall handler was called (see {@link #deliver}), for the messages. */
    volatile long releasingSince;
    /** {@link #release} began for it (guarded by the Held): it is given back once. */
    boolean released;
    volatile boolean clean;

    Held(HeldLock lock, HzSession session) {
      this.lock = lock;
      this.session = session;
    }
  }

  private final MetaStore store;
  private final String fsName;
  private final String nodeName;
  private final Duration sessionTtl;
  private final long minHoldNanos;
  private final long idleNanos;
  private final long cleanIdleNanos;
  private final Duration startTimeout;
  private final Peers peers;
  /** Where the filesystem's live members are (members/): see {@link #awaitCluster}. */
  private final byte[] membersPrefix;
  private final HazelcastMember member;
  private final Map<Long, Held> held = new ConcurrentHashMap<>();
  private final Map<Long, Gate> gates = new ConcurrentHashMap<>();
  /** Every inode's queue as the map's events showed it last (guarded by itself for updates). */
  private final Map<Long, LockQueue> view = new ConcurrentHashMap<>();
  private final ScheduledExecutorService timer;
  private final ExecutorService recalls;
  private final AtomicLong recallsServed = new AtomicLong();
  private final AtomicLong acquires = new AtomicLong();
  private final AtomicLong deadDropped = new AtomicLong();
  private volatile RecallHandler recallHandler;
  private volatile LongConsumer exclusiveListener;
  private volatile HzSession session;
  private volatile boolean closed;

  @Activate
  public HazelcastLockService(@Reference(name = "metaStore") MetaStore store, Config config) {
    this.store = Objects.requireNonNull(store, "store");
    this.fsName = required("fsName", config.fsName());
    this.nodeName = required("nodeName", config.nodeName());
    String address = required("address", config.address());
    if (config.sessionTtlSeconds() < 1 || config.minHoldMillis() < 0
        || config.idleReleaseSeconds() < 1 || config.cleanReleaseMillis() < 1
        || config.startTimeoutSeconds() < 1) {
      throw new IllegalArgumentException(PID + ": sessionTtlSeconds, idleReleaseSeconds,"
          + " cleanReleaseMillis and startTimeoutSeconds must be at least 1, minHoldMillis at"
          + " least 0");
    }
    this.sessionTtl = Duration.ofSeconds(config.sessionTtlSeconds());
    this.minHoldNanos = TimeUnit.MILLISECONDS.toNanos(config.minHoldMillis());
    this.idleNanos = TimeUnit.SECONDS.toNanos(config.idleReleaseSeconds());
    this.cleanIdleNanos = Math.min(idleNanos,
        TimeUnit.MILLISECONDS.toNanos(config.cleanReleaseMillis()));
    this.startTimeout = Duration.ofSeconds(config.startTimeoutSeconds());
    int port = config.port() == 0 ? HazelcastMember.freePort(address) : port(config.port());
    Keyspace space = Keyspace.of(fsName);
    this.membersPrefix = space.bytes(Keyspace.MEMBERS);
    this.peers = Peers.register(store, space, nodeName, address, port);
    this.timer = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "etcfs-hz-timer"));
    this.recalls = Executors.newCachedThreadPool(r -> daemon(r, "etcfs-hz-recall"));
    this.member = HazelcastMember.start(
        HazelcastMember.config(fsName, nodeName, address, port, peers.discovery()),
        startTimeout, this::joined);
    try {
      awaitCluster();
    } catch (RuntimeException e) {
      timer.shutdownNow();
      recalls.shutdownNow();
      member.stop(STOP_WAIT);
      peers.close();
      throw e;
    }
    long check = Math.max(TimeUnit.MILLISECONDS.toNanos(50), cleanIdleNanos / 4);
    timer.scheduleWithFixedDelay(this::housekeeping, check, check, TimeUnit.NANOSECONDS);
    timer.scheduleWithFixedDelay(this::sweepDeadSessions, SWEEP_SECONDS, SWEEP_SECONDS,
        TimeUnit.SECONDS);
  }

  /**
   * Waits until the member has joined and sees at least half of the registered members (the
   * rule a session is renewed by), so that a node whose member cannot bind its address or reach
   * the others fails its start with the reason instead of answering EIO later. Members of dead
   * nodes stay registered for up to the registration's TTL, and two clusters formed by members
   * started together merge within seconds: both are waited for, up to the start timeout.
   */
  private void awaitCluster() {
    HazelcastInstance hz;
    try {
      hz = hz();
    } catch (IllegalStateException e) {
      throw new IllegalStateException(e.getMessage() + " (registered members: "
          + peers.addresses() + ")", e.getCause());
    }
    long deadline = System.nanoTime() + startTimeout.toNanos();
    long allBy = System.nanoTime() + Math.min(startTimeout.toNanos(), ALL_MEMBERS_WAIT.toNanos());
    while (!majority(hz) || !allLiveJoined(hz) && System.nanoTime() - allBy < 0) {
      if (System.nanoTime() - deadline > 0) {
        List<String> registered = peers.addresses();
        throw new IllegalStateException("the Hazelcast member " + member + " sees "
            + hz.getCluster().getMembers().size() + " of the " + registered.size()
            + " registered members " + registered + " after " + startTimeout.toSeconds()
            + " s: check that they reach each other at those addresses");
      }
      try {
        TimeUnit.MILLISECONDS.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted waiting for the Hazelcast cluster");
      }
    }
  }

  /** On the member's start thread, once it joined: listen to every queue, then read them all. */
  private void joined(HazelcastInstance hz) {
    IMap<Long, LockQueue> locks = hz.getMap(LOCKS);
    locks.addEntryListener(new QueueEvents(this::changed), true);
    for (Map.Entry<Long, LockQueue> e : locks.entrySet()) {
      if (!e.getValue().isEmpty()) {
        view.putIfAbsent(e.getKey(), e.getValue());
      }
    }
  }

  @Deactivate
  void deactivate() {
    closed = true;
    HzSession s = session;
    try {
      if (s != null && !s.isExpired()) {
        for (Held h : new ArrayList<>(held.values())) {
          releaseQuietly(h.lock);
        }
      }
    } finally {
      held.clear();
      if (s != null) {
        s.close();
      }
      timer.shutdownNow();
      recalls.shutdownNow();
      wakeAll();
      member.stop(STOP_WAIT);
      peers.close();
    }
  }

  /** Ends this node as a crash would: no release, nothing deleted, the member gone at once. */
  void halt() {
    closed = true;
    HzSession s = session;
    if (s != null) {
      s.halt();
    }
    timer.shutdownNow();
    recalls.shutdownNow();
    wakeAll();
    member.terminate();
  }

  @Override
  public String backend() {
    return BACKEND_NAME;
  }

  private HazelcastInstance hz() {
    checkOpen();
    try {
      return member.started().toCompletableFuture()
          .get(startTimeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      throw new IllegalStateException("the Hazelcast member " + member + " has not joined its"
          + " cluster within " + startTimeout.toSeconds() + " s");
    } catch (ExecutionException e) {
      throw new IllegalStateException("the Hazelcast member " + member + " failed to start: "
          + e.getCause().getMessage(), e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted waiting for the Hazelcast member");
    }
  }

  private IMap<Long, LockQueue> lockMap() {
    return hz().getMap(LOCKS);
  }

  private IMap<Long, String> sessions() {
    return hz().getMap(SESSIONS);
  }

  @Override
  public LockSession session() {
    return hzSession();
  }

  private HzSession hzSession() {
    synchronized (this) {
      HzSession s = session;
      if (s == null || s.isExpired()) {
        checkOpen();
        NoWait.check(); // opening a session asks the cluster: not where a thread must not wait
        HazelcastInstance hz = hz();
        if (!majority(hz)) {
          // a member cut off from the others would open a session only its side knows
          throw new IllegalStateException("no lock session: the Hazelcast member " + member
              + " sees " + hz.getCluster().getMembers().size() + " member(s), fewer than half"
              + " of those registered in etcd");
        }
        long id = hz.getFlakeIdGenerator(SESSIONS).newId();
        s = HzSession.open(id, nodeName, hz.getMap(SESSIONS), sessionTtl,
            () -> majority(hz), this::sessionEnded);
        session = s;
      }
      return s;
    }
  }

  /**
   * Whether this member sees at least half of the members registered in etcd: a member cut
   * off from the others must let its session lapse rather than renew it in a cluster of its
   * own. (Half, not a majority: a two-node cluster then survives the death of one node; it
   * cannot tell that from a partition, and a partition there costs a wait or an EIO, never
   * data — the core's fence.) An unreadable etcd counts as no.
   */
  /**
   * How long a starting member waits for the members of every live node, beyond a majority of
   * the registered ones. Members started at once (every node at a live switch) register and
   * join at slightly different moments: one that went ahead on the majority rule alone formed a
   * cluster of its own, opened its session there, and lost that session's entry when the
   * clusters merged — for seconds the others dropped its lock requests as a dead session's and
   * raised the fences of locks it held (EIO on its writes; the experiment runner saw it in two
   * of three runs). Bounded, so that a node whose member key outlives it (dead, frozen) delays a
   * start by this much at most, and the majority rule decides after.
   */
  static final Duration ALL_MEMBERS_WAIT = Duration.ofSeconds(10);

  /**
   * Whether this member's cluster holds at least as many members as etcfs has live nodes, and
   * the partitions have settled among them (no migration under way: sessions opened meanwhile
   * were seen gone by other members right after).
   */
  private boolean allLiveJoined(HazelcastInstance hz) {
    try {
      int live = store.range(membersPrefix, io.etcfs.spi.meta.Keys.prefixEnd(membersPrefix), 0)
          .kvs().size();
      return hz.getCluster().getMembers().size() >= live
          && hz.getPartitionService().isClusterSafe();
    } catch (RuntimeException e) {
      return false;
    }
  }

  private boolean majority(HazelcastInstance hz) {
    try {
      int registered = peers.addresses().size();
      int seen = hz.getCluster().getMembers().size();
      return seen * 2 >= registered;
    } catch (RuntimeException e) {
      return false;
    }
  }

  private void sessionEnded(HzSession s) {
    held.values().removeIf(h -> h.session == s);
    wakeAll();
  }

  @Override
  public HeldLock acquire(long inode, LockMode mode, Duration timeout)
      throws LockTimeoutException {
    Held h = held.get(inode);
    if (h != null && !h.releasing && covers(h.lock.mode(), mode) && !h.session.isExpired()
        && h.session == session) {
      h.lastUsed = System.nanoTime();
      return h.lock;
    }
    NoWait.check();
    long deadline = System.nanoTime() + timeout.toNanos();
    Gate gate = gates.compute(inode, (i, g) -> {
      Gate state = g == null ? new Gate() : g;
      state.users++;
      return state;
    });
    try {
      synchronized (gate) {
        return acquire(gate, inode, mode, deadline);
      }
    } finally {
      gates.computeIfPresent(inode, (i, g) -> --g.users == 0 ? null : g);
    }
  }

  private static boolean covers(LockMode held, LockMode wanted) {
    return held == LockMode.EXCLUSIVE || wanted == LockMode.SHARED;
  }

  private HeldLock acquire(Gate gate, long inode, LockMode mode, long deadline)
      throws LockTimeoutException {
    while (true) {
      checkOpen();
      HzSession s = hzSession();
      Held h = held.get(inode);
      if (h != null && (h.releasing || h.session != s)) {
        awaitGone(gate, h, deadline);
        continue;
      }
      if (h != null) {
        if (covers(h.lock.mode(), mode)) {
          h.lastUsed = System.nanoTime();
          return h.lock;
        }
        release(h.lock); // an upgrade queues again, behind whoever is waiting
      }
      gate.waiting = mode;
      gate.waitingSince = System.nanoTime();
      try {
        HeldLock granted = queueAndWait(gate, s, inode, mode, deadline);
        if (granted != null) {
          acquires.incrementAndGet();
          return granted;
        }
      } finally {
        gate.waiting = null;
      }
      // the session ended while waiting: start over under a new one
    }
  }

  /** Waits until {@code h} is no longer held here (its release is under way). */
  private void awaitGone(Gate gate, Held h, long deadline) throws LockTimeoutException {
    while (held.get(h.lock.inode()) == h && !h.session.isExpired()) {
      if (!await(gate, gate.version, deadline)) {
        throw new LockTimeoutException("lock on inode " + Long.toHexString(h.lock.inode())
            + " is still being given back" + (h.releasing ? " (its hand-over began "
            + (System.nanoTime() - h.releasingSince) / 1_000_000 + " ms ago)" : ""));
      }
    }
    held.remove(h.lock.inode(), h);
  }

  /**
   * Puts this session's request in the inode's queue and waits for its grant: news of the
   * queue wakes it; without news it reads the queue again every {@link #NUDGE_NANOS} and drops
   * the requests ahead of it whose sessions are gone.
   *
   * @return the lock, or null if the session ended meanwhile
   */
  private HeldLock queueAndWait(Gate gate, HzSession s, long inode, LockMode mode,
      long deadline) throws LockTimeoutException {
    IMap<Long, LockQueue> locks = lockMap();
    LockQueue q = locks.executeOnKey(inode, Processors.request(s.id(), nodeName, mode));
    while (true) {
      LockQueue.Request mine = q.of(s.id());
      if (s.isExpired() || session != s) {
        return null;
      }
      if (mine == null) {
        // dropped as dead by another node: this session cannot hold anything any more
        LOG.log(Level.WARNING, "lock request on inode {0} was dropped: another node found"
            + " session {1} gone", Long.toHexString(inode), Long.toHexString(s.id()));
        s.checkDeadline();
        q = locks.executeOnKey(inode, Processors.request(s.id(), nodeName, mode));
        continue;
      }
      if (mine.granted()) {
        return record(inode, new HeldLock(inode, mine.mode(), mine.token(), s.id(), 0), s, q);
      }
      long seen;
      synchronized (gate.signal) {
        seen = gate.version;
      }
      long now = System.nanoTime();
      if (now - deadline >= 0) {
        q = locks.executeOnKey(inode, Processors.withdraw(s.id()));
        LockQueue.Request last = q.of(s.id());
        if (last != null && last.granted()) {
          return record(inode, new HeldLock(inode, last.mode(), last.token(), s.id(), 0), s, q);
        }
        throw new LockTimeoutException("lock on inode " + Long.toHexString(inode) + " ("
            + mode + ") not granted in time; ahead of it: " + q.blockers(s.id()));
      }
      boolean news = await(gate, seen, Math.min(deadline, now + NUDGE_NANOS));
      LockQueue latest = news ? view.get(inode) : null;
      if (latest != null && latest.of(s.id()) != null) {
        q = latest;
      } else {
        q = dropDead(locks, inode, locks.get(inode));
      }
    }
  }

  /** The queue with the requests of dead sessions ahead of this node's own dropped. */
  private LockQueue dropDead(IMap<Long, LockQueue> locks, long inode, LockQueue q) {
    if (q == null) {
      return LockQueue.empty();
    }
    HzSession mine = session;
    Set<Long> dead = new HashSet<>();
    IMap<Long, String> sessions = sessions();
    for (LockQueue.Request r : q.requests()) {
      if ((mine == null || r.session() != mine.id()) && !dead.contains(r.session())
          && !sessions.containsKey(r.session())) {
        dead.add(r.session());
      }
    }
    if (dead.isEmpty()) {
      return q;
    }
    deadDropped.addAndGet(dead.size());
    LOG.log(Level.INFO, "inode {0}: dropping requests of ended sessions {1}",
        Long.toHexString(inode), hexes(dead));
    return locks.executeOnKey(inode, Processors.drop(dead));
  }

  /**
   * Records a grant as held, then recalls it at once if a conflicting request already waits
   * behind it in the queue the grant came with or in the view (an event that showed one before
   * the lock was recorded found nothing to recall).
   */
  private HeldLock record(long inode, HeldLock lock, HzSession s, LockQueue q) {
    Held h = new Held(lock, s);
    LockQueue latest;
    synchronized (view) {
      held.put(inode, h);
      latest = view.get(inode);
    }
    if (s.isExpired() || session != s) {
      held.remove(inode, h);
      return null; // sessionEnded may have missed it: start over under a new session
    }
    for (LockQueue seen : new LockQueue[] {q, latest}) {
      LockQueue.Request wanted = seen == null ? null : seen.conflictBehind(s.id());
      if (wanted != null) {
        recall(h, wanted.mode());
        break;
      }
    }
    return lock;
  }

  /** An event of the map: the view, the waiters, the recalls and the exclusive listener. */
  private void changed(long inode, LockQueue now) {
    LockQueue before;
    Held h;
    synchronized (view) {
      before = now == null || now.isEmpty() ? view.remove(inode) : view.put(inode, now);
      h = held.get(inode);
    }
    Gate gate = gates.get(inode);
    if (gate != null) {
      synchronized (gate.signal) {
        gate.version++;
        gate.signal.notifyAll();
      }
    }
    HzSession s = session;
    LongConsumer listener = exclusiveListener;
    if (listener != null && s != null && now != null
        && exclusiveElsewhere(now, s.id()) && !exclusiveElsewhere(before, s.id())) {
      listener.accept(inode);
    }
    if (h != null && now != null && h.session == s) {
      LockQueue.Request wanted = now.conflictBehind(h.session.id());
      if (wanted != null) {
        recall(h, wanted.mode());
      }
    }
  }

  private static boolean exclusiveElsewhere(LockQueue q, long mine) {
    if (q == null) {
      return false;
    }
    for (LockQueue.Request r : q.requests()) {
      if (r.session() != mine && r.mode() == LockMode.EXCLUSIVE) {
        return true;
      }
    }
    return false;
  }

  /** Waits for news of the gate's inode newer than {@code seen}, at most until {@code until}. */
  private boolean await(Gate gate, long seen, long until) {
    synchronized (gate.signal) {
      while (gate.version == seen && !closed) {
        long left = until - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        try {
          TimeUnit.NANOSECONDS.timedWait(gate.signal, left);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return false;
        }
      }
      return gate.version != seen;
    }
  }

  private void wakeAll() {
    for (Gate gate : gates.values()) {
      synchronized (gate.signal) {
        gate.version++;
        gate.signal.notifyAll();
      }
    }
  }

  /** Schedules the recall of {@code h}, no sooner than the minimum hold after its grant. */
  private void recall(Held h, LockMode wanted) {
    long now = System.nanoTime();
    synchronized (h) {
      if (h.releasing || (h.recalling && now - h.recalledAt < RECALL_AGAIN_NANOS)) {
        return;
      }
      h.recalling = true;
      h.recalledAt = now;
    }
    long delay = Math.max(0, h.grantedAt + minHoldNanos - now);
    try {
      timer.schedule(() -> recalls.execute(() -> deliver(h, wanted)), delay,
          TimeUnit.NANOSECONDS);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      // shutting down: the lock goes with the session
    }
  }

  /** Hands the lock over: the handler flushes, then the lock is released, whatever it did. */
  private void deliver(Held h, LockMode wanted) {
    synchronized (h) {
      if (held.get(h.lock.inode()) != h || h.releasing) {
        return;
      }
      h.releasing = true;
      h.releasingSince = System.nanoTime();
    }
    RecallHandler handler = recallHandler;
    try {
      if (handler != null) {
        handler.recall(h.lock, wanted);
      }
      long took = System.nanoTime() - h.releasingSince;
      if (took > SLOW_RECALL_NANOS) {
        LOG.log(Level.WARNING, "recall of inode {0} ({1}) took {2} ms in the core; this node's"
            + " calls for the lock waited that long", Long.toHexString(h.lock.inode()), wanted,
            took / 1_000_000);
      }
    } catch (RuntimeException e) {
      LOG.log(Level.ERROR, "recall handler failed for inode " + Long.toHexString(h.lock.inode())
          + "; releasing the lock anyway", e);
    } finally {
      recallsServed.incrementAndGet();
      release(h.lock);
    }
  }

  /**
   * Gives {@code lock} back: in the map first, and only then is it forgotten here and this
   * node's waiters woken. The other way round, a waiter of this node woke while the map still
   * held the grant, and its request — one per session — found that grant and returned it: a
   * lock the core had let go, handed back until the release landed and then held by nobody in
   * the map (the core refused it and asked again after 2 s; another node could be granted it
   * meanwhile). Until the map has it, the lock counts as releasing: calls wait in awaitGone.
   */
  @Override
  public void release(HeldLock lock) {
    Held h = held.get(lock.inode());
    if (h == null || !h.lock.equals(lock)) {
      return;
    }
    synchronized (h) {
      if (h.released) {
        return;
      }
      h.released = true;
      h.releasing = true; // no caller takes it from here, and no recall is delivered for it
      if (h.releasingSince == 0) {
        h.releasingSince = System.nanoTime();
      }
    }
    try {
      beforeReleaseSent.run();
      if (!h.session.isExpired()) {
        releaseQuietly(lock);
      }
    } finally {
      held.remove(lock.inode(), h);
      Gate gate = gates.get(lock.inode());
      if (gate != null) {
        synchronized (gate.signal) {
          gate.version++;
          gate.signal.notifyAll();
        }
      }
    }
  }

  /** A test hook: runs in {@link #release} before the map is told. */
  volatile Runnable beforeReleaseSent = () -> { };

  private void releaseQuietly(HeldLock lock) {
    try {
      lockMap().executeOnKey(lock.inode(), Processors.release(lock.sessionId()));
    } catch (RuntimeException e) {
      // the request goes when its session's entry expires
      LOG.log(Level.WARNING, "could not release the lock on inode {0}: {1}",
          Long.toHexString(lock.inode()), e.toString());
    }
  }

  /** Gives back locks unused for a while (sooner when clean), through the recall handler. */
  private void housekeeping() {
    HzSession s = session;
    if (s != null) {
      s.checkDeadline();
    }
    long now = System.nanoTime();
    for (Held h : held.values()) {
      if (!h.recalling && !h.releasing
          && now - h.lastUsed > (h.clean ? cleanIdleNanos : idleNanos)) {
        recall(h, LockMode.EXCLUSIVE);
      }
    }
  }

  /**
   * On the oldest member only: drops from every queue the requests of sessions whose entries
   * are gone (a dead node's locks nobody has asked for yet), so the map follows the living.
   */
  private void sweepDeadSessions() {
    try {
      HazelcastInstance hz = member.started().toCompletableFuture().getNow(null);
      if (hz == null || closed
          || !hz.getCluster().getMembers().iterator().next().localMember()) {
        return;
      }
      Map<Long, Set<Long>> bySession = new LinkedHashMap<>();
      for (Map.Entry<Long, LockQueue> e : view.entrySet()) {
        for (LockQueue.Request r : e.getValue().requests()) {
          bySession.computeIfAbsent(r.session(), k -> new HashSet<>()).add(e.getKey());
        }
      }
      IMap<Long, String> sessions = hz.getMap(SESSIONS);
      IMap<Long, LockQueue> locks = hz.getMap(LOCKS);
      for (Map.Entry<Long, Set<Long>> e : bySession.entrySet()) {
        if (!sessions.containsKey(e.getKey())) {
          deadDropped.incrementAndGet();
          LOG.log(Level.INFO, "sweep: dropping the requests of ended session {0} on inodes {1}",
              Long.toHexString(e.getKey()), hexes(e.getValue()));
          for (long inode : e.getValue()) {
            locks.executeOnKey(inode, Processors.drop(Set.of(e.getKey())));
          }
        }
      }
    } catch (RuntimeException e) {
      LOG.log(Level.DEBUG, "sweep of dead sessions failed: {0}", e.toString());
    }
  }

  @Override
  public Writer writerElsewhere(long inode) {
    HzSession s = session;
    if (s == null || !member.started().toCompletableFuture().isDone()) {
      return Writer.UNKNOWN;
    }
    LockQueue q = view.get(inode);
    if (q == null) {
      return Writer.NONE;
    }
    boolean holding = false;
    for (LockQueue.Request r : q.requests()) {
      if (r.session() == s.id() || r.mode() != LockMode.EXCLUSIVE) {
        continue;
      }
      if (!r.granted()) {
        return Writer.WAITING;
      }
      holding = true;
    }
    return holding ? Writer.HOLDING : Writer.NONE;
  }

  @Override
  public void clean(HeldLock lock, boolean clean) {
    Held h = held.get(lock.inode());
    if (h != null && h.lock.equals(lock)) {
      h.clean = clean;
    }
  }

  @Override
  public boolean watchExclusive(LongConsumer listener) {
    exclusiveListener = listener;
    return true;
  }

  @Override
  public void setRecallHandler(RecallHandler handler) {
    recallHandler = Objects.requireNonNull(handler, "handler");
  }

  HazelcastMember member() {
    return member;
  }

  /** The requests in the inode's queue as the map holds it now (for tests). */
  int queued(long inode) {
    LockQueue q = lockMap().get(inode);
    return q == null ? 0 : q.requests().size();
  }

  // ---- LockReport

  @Override
  public List<LockState> locks() {
    List<LockState> out = new ArrayList<>();
    long now = System.nanoTime();
    for (Held h : held.values()) {
      LockQueue q = view.get(h.lock.inode());
      int waiters = 0;
      if (q != null) {
        for (LockQueue.Request r : q.requests()) {
          waiters += r.granted() ? 0 : 1;
        }
      }
      State state = h.releasing ? State.RELEASING
          : h.recalling ? State.RECALL_PENDING : State.HELD;
      out.add(new LockState(h.lock.inode(), h.lock.mode(), state, h.clean,
          h.lock.fencingToken(), Duration.ofNanos(now - h.grantedAt), waiters, 0));
    }
    for (Map.Entry<Long, Gate> e : gates.entrySet()) {
      LockMode waiting = e.getValue().waiting;
      if (waiting != null) {
        out.add(new LockState(e.getKey(), waiting, State.WAITING, false, 0,
            Duration.ofNanos(now - e.getValue().waitingSince), -1, 0));
      }
    }
    out.sort(java.util.Comparator.comparingLong(LockState::inode));
    return out;
  }

  @Override
  public Map<String, String> counters() {
    Map<String, String> c = new LinkedHashMap<>();
    HazelcastInstance hz = member.started().toCompletableFuture().getNow(null);
    c.put("member", member.toString());
    c.put("members", hz == null ? "not joined" : Integer.toString(
        hz.getCluster().getMembers().size()));
    HzSession s = session;
    c.put("session", s == null ? "none" : Long.toHexString(s.id())
        + (s.isExpired() ? " (ended: " + s.endReason() + ")" : ""));
    c.put("acquires", Long.toString(acquires.get()));
    c.put("recalls served", Long.toString(recallsServed.get()));
    c.put("dead sessions dropped", Long.toString(deadDropped.get()));
    return c;
  }

  @Override
  public Optional<List<ClusterLock>> cluster() {
    List<ClusterLock> out = new ArrayList<>();
    new java.util.TreeMap<>(view).forEach((inode, q) -> {
      for (LockQueue.Request r : q.requests()) {
        out.add(new ClusterLock(inode, r.mode(), r.granted(), false, r.node(), r.token(),
            Long.toHexString(r.session())));
      }
    });
    return Optional.of(out);
  }

  // ---- helpers

  private void checkOpen() {
    if (closed) {
      throw new IllegalStateException("the Hazelcast lock service is stopped");
    }
  }

  private static String hexes(Set<Long> ids) {
    return ids.stream().map(Long::toHexString).toList().toString();
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }

  private static int port(int port) {
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException(PID + ": port " + port + " is not a TCP port");
    }
    return port;
  }

  private static String required(String name, String value) {
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException(PID + ": " + name + " is not set");
    }
    return value;
  }

  @Override
  public String toString() {
    return "Hazelcast locks on " + member;
  }
}

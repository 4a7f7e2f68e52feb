package io.etcfs.testing;

import io.etcfs.spi.lock.CreateGrant;
import io.etcfs.spi.lock.HeldLock;
import io.etcfs.spi.lock.LockMode;
import io.etcfs.spi.lock.LockService;
import io.etcfs.spi.lock.LockSession;
import io.etcfs.spi.lock.LockTimeoutException;
import io.etcfs.spi.lock.RecallHandler;
import io.etcfs.spi.meta.Compare;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.Txn;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * Inode locks between engines of one test process ("nodes" sharing a {@link Table}), for the
 * core's unit tests: conflicting requests recall the holders through their handlers, and each
 * grant puts a key in the store whose create revision is the token.
 * Not fair and not lease-backed: the lock plug-ins' own contract suite covers those.
 */
public final class LocalLockService implements LockService {
  /** The locks of one test filesystem. */
  public static final class Table {
    private final Map<Long, Map<LocalLockService, HeldLock>> held = new HashMap<>();
    private final Set<HeldLock> recalling = new HashSet<>();
    private final ExecutorService recalls = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "test-lock-recall");
      t.setDaemon(true);
      return t;
    });

    /** Whether a lock on {@code inode} is being recalled: another node asked for it. */
    public boolean recalling(long inode) {
      synchronized (this) {
        return recalling.stream().anyMatch(l -> l.inode() == inode);
      }
    }
  }

  private final Table table;
  private final java.util.concurrent.atomic.AtomicInteger requests =
      new java.util.concurrent.atomic.AtomicInteger();
  private final MetaStore store;
  private final String name;
  private final long sessionId;
  private volatile RecallHandler handler;
  private volatile boolean grantsOnCreate = true;
  private volatile boolean recallWhenAdopted;
  private final java.util.concurrent.atomic.AtomicInteger createGrants =
      new java.util.concurrent.atomic.AtomicInteger();
  private volatile boolean expired;
  private final LockSession session = new LockSession() {
    @Override
    public long id() {
      return sessionId;
    }

    @Override
    public boolean isExpired() {
      return expired;
    }

    @Override
    public CompletionStage<Void> done() {
      return new CompletableFuture<>();
    }
  };

  private final String keyPrefix;

  /**
   * @param keyPrefix where grants put their token keys: under the filesystem's prefix, so that
   *     a cache watching it sees each grant's revision
   */
  /** As a session whose deadline passed (the node stalled past its TTL): every lock is lost. */
  public void expireSession() {
    expired = true;
  }

  public LocalLockService(Table table, MetaStore store, String keyPrefix, String name) {
    this.keyPrefix = keyPrefix;
    this.table = table;
    this.store = store;
    this.name = name;
    this.sessionId = name.hashCode() & 0x7fffffffL;
  }

  @Override
  public String backend() {
    return "local";
  }

  @Override
  public LockSession session() {
    return session;
  }

  /**
   * Called with every lock {@link #acquire} grants anew, after the grant and before it returns
   * (a test hook): a hook that waits holds the grant "in flight", as a loaded machine may.
   */
  public volatile java.util.function.Consumer<HeldLock> granted = lock -> { };

  @Override
  public HeldLock acquire(long inode, LockMode mode, Duration timeout)
      throws LockTimeoutException {
    HeldLock[] fresh = {null};
    HeldLock lock = acquire(inode, mode, timeout, fresh);
    if (fresh[0] != null) {
      granted.accept(fresh[0]);
    }
    return lock;
  }

  private HeldLock acquire(long inode, LockMode mode, Duration timeout, HeldLock[] fresh)
      throws LockTimeoutException {
    long deadline = System.nanoTime() + timeout.toNanos();
    synchronized (table) {
      while (true) {
        Map<LocalLockService, HeldLock> holders = table.held.computeIfAbsent(inode,
            i -> new HashMap<>());
        HeldLock mine = holders.get(this);
        if (mine != null && table.recalling.contains(mine)) {
          waitLocked(deadline); // being recalled: never handed out again
          continue;
        }
        if (mine != null && (mine.mode() == LockMode.EXCLUSIVE || mode == LockMode.SHARED)) {
          return mine;
        }
        if (mine != null) {
          dropLocked(mine);
        }
        List<Map.Entry<LocalLockService, HeldLock>> conflicts = new ArrayList<>();
        holders.forEach((s, l) -> {
          if (s != this && l.mode().conflictsWith(mode)) {
            conflicts.add(Map.entry(s, l));
          }
        });
        if (conflicts.isEmpty()) {
          byte[] key = key(inode);
          long token = store.commit(new Txn().then(Op.put(key, DIRTY))).revision();
          requests.incrementAndGet();
          HeldLock granted = new HeldLock(inode, mode, token, sessionId,
              noGrantRevision ? 0 : token);
          holders.put(this, granted);
          fresh[0] = granted;
          return granted;
        }
        for (Map.Entry<LocalLockService, HeldLock> c : conflicts) {
          if (table.recalling.add(c.getValue())) {
            table.recalls.execute(() -> c.getKey().deliver(c.getValue(), mode));
          }
        }
        waitLocked(deadline);
      }
    }
  }

  /**
   * Shared locks on every inode nobody holds exclusively, in one transaction (SPI lock 2.4).
   * Never waits, never recalls.
   */
  @Override
  public List<HeldLock> prefetchShared(java.util.Collection<Long> inodes) {
    synchronized (table) {
      List<Long> free = new ArrayList<>();
      for (long inode : inodes) {
        Map<LocalLockService, HeldLock> holders = table.held.get(inode);
        if (holders == null || !holders.containsKey(this) && holders.values().stream()
            .noneMatch(l -> l.mode() == LockMode.EXCLUSIVE)) {
          free.add(inode);
        }
      }
      if (free.isEmpty()) {
        return List.of();
      }
      Txn puts = new Txn();
      free.forEach(inode -> puts.then(Op.put(key(inode), DIRTY)));
      long token = store.commit(puts).revision();
      requests.incrementAndGet();
      List<HeldLock> granted = new ArrayList<>();
      for (long inode : free) {
        HeldLock lock = new HeldLock(inode, LockMode.SHARED, token, sessionId, token);
        table.held.computeIfAbsent(inode, i -> new HashMap<>()).put(this, lock);
        granted.add(lock);
      }
      return granted;
    }
  }

  /** Lock requests that reached the store: one per grant, one per prefetch. */
  public int requests() {
    return requests.get();
  }

  /** Whether this service holds a lock on {@code inode}. */
  public boolean holds(long inode) {
    synchronized (table) {
      Map<LocalLockService, HeldLock> holders = table.held.get(inode);
      return holders != null && holders.containsKey(this);
    }
  }

  private void waitLocked(long deadline) throws LockTimeoutException {
    long left = deadline - System.nanoTime();
    if (left <= 0) {
      throw new LockTimeoutException("not granted to " + name + " in time");
    }
    try {
      TimeUnit.NANOSECONDS.timedWait(table, left);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new LockTimeoutException("interrupted");
    }
  }

  private void deliver(HeldLock lock, LockMode wanted) {
    RecallHandler h = handler;
    try {
      if (h != null) {
        h.recall(lock, wanted);
      }
    } finally {
      release(lock);
    }
  }

  @Override
  public void release(HeldLock lock) {
    synchronized (table) {
      Map<LocalLockService, HeldLock> holders = table.held.get(lock.inode());
      if (holders != null && lock.equals(holders.get(this))) {
        dropLocked(lock);
      }
      table.recalling.remove(lock);
      table.notifyAll();
    }
  }

  private void dropLocked(HeldLock lock) {
    table.held.get(lock.inode()).remove(this);
    store.commit(new Txn().when(Compare.createRevision(key(lock.inode()), lock.fencingToken()))
        .then(Op.delete(key(lock.inode()))));
  }

  /** The value of every grant key. */
  private static final byte[] DIRTY = {1};

  /**
   * Makes this node's lock view trail the store (a test hook): {@link #writerElsewhere} shows
   * no lock at all, as a lock watch that lags would.
   */
  public volatile boolean viewLags;

  /** Keeps no view of other nodes' locks (a test hook): {@link #writerElsewhere} says UNKNOWN. */
  public volatile boolean noView;

  /** Grants name no metadata revision (a test hook): as a backend that keeps no keys in etcd. */
  public volatile boolean noGrantRevision;

  /** Clean hints the core gave, by inode: true for clean. */
  public final Map<Long, Boolean> cleanHints = new java.util.concurrent.ConcurrentHashMap<>();

  /** Holders only (this table queues nobody): another service's exclusive lock is held. */
  @Override
  public Writer writerElsewhere(long inode) {
    if (noView) {
      return Writer.UNKNOWN;
    }
    if (viewLags) {
      return Writer.NONE;
    }
    synchronized (table) {
      Map<LocalLockService, HeldLock> holders = table.held.get(inode);
      return holders != null && holders.entrySet().stream()
          .anyMatch(e -> e.getKey() != this && e.getValue().mode() == LockMode.EXCLUSIVE)
          ? Writer.HOLDING : Writer.NONE;
    }
  }

  @Override
  public void clean(HeldLock lock, boolean clean) {
    cleanHints.put(lock.inode(), clean);
  }

  /** Whether creates grant their creator the lock (SPI 2.2); off: taken at first use. */
  public void grantOnCreate(boolean grant) {
    grantsOnCreate = grant;
  }

  @Override
  public CreateGrant createGrant(long inode) {
    if (!grantsOnCreate) {
      return null;
    }
    createGrants.incrementAndGet();
    byte[] key = key(inode);
    return new CreateGrant(inode, sessionId, List.of(Compare.absent(key)),
        List.of(Op.put(key, DIRTY)));
  }

  /** How many grants {@link #createGrant} built (one per attempt of a create). */
  public int createGrants() {
    return createGrants.get();
  }

  @Override
  public HeldLock adoptCreated(CreateGrant grant, long revision) {
    HeldLock lock;
    synchronized (table) {
      Map<LocalLockService, HeldLock> holders = table.held.computeIfAbsent(grant.inode(),
          i -> new HashMap<>());
      if (!holders.isEmpty()) {
        throw new IllegalStateException("inode " + grant.inode() + " locked before its create: "
            + holders.values());
      }
      lock = new HeldLock(grant.inode(), LockMode.EXCLUSIVE, revision, sessionId, revision);
      holders.put(this, lock);
    }
    if (recallWhenAdopted) {
      deliver(lock, LockMode.SHARED); // as if a request came before the caller recorded it
    }
    return lock;
  }

  /** Recall each created lock as it is adopted, before the caller has recorded it. */
  public void recallWhenAdopted(boolean recall) {
    recallWhenAdopted = recall;
  }

  @Override
  public void abandonCreated(CreateGrant grant) {
    store.commit(new Txn().then(Op.delete(key(grant.inode()))));
  }

  @Override
  public void setRecallHandler(RecallHandler handler) {
    this.handler = handler;
  }

  private byte[] key(long inode) {
    return Keys.of(keyPrefix + inode + "/" + name);
  }
}

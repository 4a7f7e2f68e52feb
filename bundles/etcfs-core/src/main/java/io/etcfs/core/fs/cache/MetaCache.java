package io.etcfs.core.fs.cache;

import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.NoWait;
import io.etcfs.spi.meta.RangeResult;
import io.etcfs.spi.meta.WatchEvent;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * This node's cache of metadata keys (inodes, entries, directory times: present or absent) and of
 * per-inode groups (extent maps, xattrs). Kept coherent by one watch on the filesystem prefix
 * ({@link CacheWatch}), never by time-outs, and versioned by etcd revisions:
 *
 * <ul>
 *   <li>every cached key carries the store revision it is known at ({@code asOf}); a newer fact
 *       replaces an older one, never the reverse;
 *   <li>a watch event updates the key it names with the value it carries (for the keys the
 *       namespace reads, {@link #mirrored}, even when not cached yet), so another node's change
 *       costs this node no read;
 *   <li>a fill from a read at revision R is stored only if no event of its stripe newer than R
 *       has been applied (the event may have named a key that was not cached, which left nothing
 *       to compare against) and no explicit invalidation of the stripe happened meanwhile;
 *   <li>{@link #awaitRevision} lets a committer wait until the watch has applied its own commit:
 *       from then on everything cached is at least as new as that commit, so a node reads its
 *       own writes without reading them back, and never a mix of its new state and an older one.
 * </ul>
 *
 * Groups (a whole extent map or xattr set) are dropped by any event under them and refilled on
 * demand, with the same epoch check against a racing drop.
 */
public final class MetaCache implements KvSource {
  private static final int STRIPES = 1024;
  /**
   * A bound on memory, not on staleness: past it the key cache starts over. The system property
   * {@code etcfs.cache.maxKeys} (a node's {@code ETCFS_NODE_JAVA_OPTS}) sets another; tests use
   * a small one to make a node start over often.
   */
  private static final int MAX_KEYS = Math.max(100, Integer.getInteger("etcfs.cache.maxKeys",
      200_000));
  /** The largest scope (directory) read whole on a miss so that its misses need no read. */
  static final int SCOPE_LIMIT = 1000;

  private record Entry(Optional<KeyValue> kv, long asOf) {}

  private final MetaStore store;
  private final Predicate<String> mirrored;
  private final Function<String, String> scopeOf;
  /** Scopes whose every key is cached: a miss under one is an authoritative absence. */
  private final Set<String> complete = ConcurrentHashMap.newKeySet();
  /** Scopes found too large to read whole (forgotten when the cache starts over). */
  private final Set<String> large = ConcurrentHashMap.newKeySet();
  /**
   * Counts every explicit drop of cached keys; a scope is marked complete only if none raced.
   * Guarded by {@link #scopes}, which every drop holds from the moment it drops scopes until its
   * keys are gone, and a fill while it stores its keys and marks its scope: a fill can never
   * store keys that a drop then removes from under a complete scope, which served names that
   * exist as absent (`rm -rf` found a directory "not empty": the cache overflowed and started
   * over while directories were being filled).
   */
  private long drops;
  private final Object scopes = new Object();
  /** Runs inside a drop, after scopes and before keys are dropped: for tests of the above. */
  volatile Runnable whileDropping;
  private final Map<String, Entry> keys = new ConcurrentHashMap<>();
  private final Map<Long, Object> groups = new ConcurrentHashMap<>();
  private volatile Consumer<String> dropGroupsOf = k -> { };
  /** Bumped by explicit invalidations: a fill that raced one is not stored. */
  private final AtomicLongArray epochs = new AtomicLongArray(STRIPES);
  /** The newest event revision applied per stripe: a fill older than it is not stored. */
  private final AtomicLongArray eventRevs = new AtomicLongArray(STRIPES);
  private final ReentrantLock progress = new ReentrantLock();
  private final Condition advanced = progress.newCondition();
  /** Every event up to this revision has been applied (while live). */
  private volatile long watchRevision;

  /**
   * The newest revision whose keys a committer dropped because the watch had not shown it in
   * time ({@link #droppedUnshown}): until the watch has applied it, those keys are missing here
   * though they exist, so no scope may be marked complete without a read ({@link #primeNew}).
   */
  private final java.util.concurrent.atomic.AtomicLong droppedAhead =
      new java.util.concurrent.atomic.AtomicLong();

  private volatile boolean live;
  /** The revision the cache last started (empty) at: older events change nothing in it. */
  private volatile long liveFrom;

  /**
   * @param mirrored which keys an event inserts even when they are not cached: the ones the
   *     namespace reads one by one (inodes, entries, directory times)
   * @param scopeOf the prefix a key belongs to for completeness (its directory's entries), or
   *     null; every key a scope can hold must be {@code mirrored}
   */
  private final java.util.concurrent.atomic.LongAdder hits =
      new java.util.concurrent.atomic.LongAdder();
  private final java.util.concurrent.atomic.LongAdder misses =
      new java.util.concurrent.atomic.LongAdder();

  public MetaCache(MetaStore store, Predicate<String> mirrored, Function<String, String> scopeOf) {
    this.store = store;
    this.mirrored = mirrored;
    this.scopeOf = scopeOf;
  }

  @Override
  public Optional<KeyValue> get(byte[] key) {
    String k = str(key);
    Entry hit = keys.get(k);
    if (hit != null) {
      hits.increment();
      return hit.kv;
    }
    String scope = scopeOf.apply(k);
    if (scope != null && live && !large.contains(scope)) {
      if (complete.contains(scope) || fillScope(scope)) {
        hit = keys.get(k);
        if (hit != null) {
          hits.increment();
          return hit.kv;
        }
        if (complete.contains(scope)) {
          hits.increment();
          return Optional.empty();
        }
      }
    }
    misses.increment();
    return load(key, k);
  }

  /**
   * {@code key} as far as memory knows it, asking nobody: the value if it is cached, else empty
   * (absent, or not cached).
   */
  public Optional<KeyValue> cachedOnly(byte[] key) {
    Entry hit = keys.get(str(key));
    return hit == null ? Optional.empty() : hit.kv;
  }

  /** Key look-ups answered from memory (including known absences), for the shell's stats. */
  public long hits() {
    return hits.sum();
  }

  /** Key look-ups that went to the store. */
  public long misses() {
    return misses.sum();
  }

  /**
   * Reads a whole scope (a directory's entries) if it is small, so that later misses in it (the
   * look-up before every create) need no read. Correct because every key of a scope is mirrored:
   * once the watch has applied everything up to the read's revision R and the read's keys are
   * stored as of R, any key of the scope not cached is absent, and every later change arrives as
   * an event that inserts it.
   */
  private boolean fillScope(String scope) {
    long before;
    synchronized (scopes) {
      before = drops;
    }
    byte[] from = scope.getBytes(StandardCharsets.UTF_8);
    RangeResult r = store.range(from, Keys.prefixEnd(from), SCOPE_LIMIT);
    if (r.more()) {
      large.add(scope);
      return false;
    }
    // The read's revision may belong to a change outside this filesystem, which no event here
    // will ever show: wait briefly, and without that proof read keys one by one instead.
    if (!awaitRevision(r.revision(), 50)) {
      return false;
    }
    long asOf = r.revision();
    synchronized (scopes) {
      if (drops != before || !live) {
        return false; // a key dropped since the read may be among these: store none
      }
      for (KeyValue kv : r.kvs()) {
        keys.compute(kv.keyString(), (kk, old) -> old == null || old.asOf < asOf
            ? new Entry(Optional.of(kv), asOf) : old);
      }
      complete.add(scope);
    }
    return true;
  }

  /** What {@link #completeScope} needs read before the whole scope is: the count of drops. */
  public long scopeToken() {
    synchronized (scopes) {
      return drops;
    }
  }

  /**
   * A whole scope someone else read ({@code r}: every key under {@code scope}, as a directory
   * listing reads them), stored and marked complete as {@link #fillScope} would — if no drop
   * raced it since {@code token} was taken before the read, and the watch has applied the read's
   * revision already (no wait: this only saves the read a miss under the scope would make).
   */
  public void completeScope(byte[] scope, RangeResult r, long token) {
    if (r.more() || r.kvs().size() > SCOPE_LIMIT || !live || watchRevision < r.revision()) {
      return;
    }
    String name = str(scope);
    long asOf = r.revision();
    synchronized (scopes) {
      if (drops != token || !live) {
        return;
      }
      for (KeyValue kv : r.kvs()) {
        keys.compute(kv.keyString(), (kk, old) -> old == null || old.asOf < asOf
            ? new Entry(Optional.of(kv), asOf) : old);
      }
      complete.add(name);
    }
  }

  /**
   * What a committed transaction made new, known without a read: {@code scope} (a new
   * directory's entries) complete, and each of {@code absent} (its other mirrored keys the
   * transaction did not write, such as its times) absent as of {@code revision} — unless a drop
   * raced since {@code token} ({@link #scopeToken}, taken before the transaction). Only for keys
   * that no revision before {@code revision} can have held (a new inode's): no event older than
   * the commit can concern them, and every later one inserts them (they are mirrored), so there
   * is nothing for the watch to catch up with first, unlike {@link #completeScope}. Nor while a
   * committer's dropped keys are missing ({@link #droppedUnshown}): the scope may hold one.
   */
  public void primeNew(byte[] scope, List<byte[]> absent, long revision, long token) {
    synchronized (scopes) {
      if (drops != token || !live || droppedAhead.get() > watchRevision) {
        return;
      }
      for (byte[] key : absent) {
        String k = str(key);
        if (mirrored.test(k)) {
          keys.putIfAbsent(k, new Entry(Optional.empty(), revision));
        }
      }
      complete.add(str(scope));
    }
  }

  @Override
  public RangeResult range(byte[] from, byte[] to, int limit) {
    return store.range(from, to, limit);
  }

  /**
   * Before a committer drops the keys of its commit at {@code revision}, which the watch did
   * not show in time: until it has, a scope made complete from an event (a directory created
   * before that commit, shown late) would answer those keys absent, so none is.
   */
  public void droppedUnshown(long revision) {
    droppedAhead.accumulateAndGet(revision, Math::max);
  }

  /** Reads from the store, bypassing (and refreshing) the cache: for retries. */
  public KvSource fresh() {
    return new KvSource() {
      @Override
      public Optional<KeyValue> get(byte[] key) {
        return load(key, str(key));
      }

      @Override
      public RangeResult range(byte[] from, byte[] to, int limit) {
        return store.range(from, to, limit);
      }
    };
  }

  private Optional<KeyValue> load(byte[] key, String k) {
    int stripe = stripe(k.hashCode());
    long epoch = epochs.get(stripe);
    RangeResult r = store.range(key, Keys.after(key), 1);
    Optional<KeyValue> v = r.kvs().isEmpty() ? Optional.empty() : Optional.of(r.kvs().get(0));
    if (keys.size() > MAX_KEYS) {
      invalidateAll();
    }
    long asOf = r.revision();
    keys.compute(k, (kk, old) -> live && epochs.get(stripe) == epoch
        && eventRevs.get(stripe) <= asOf && (old == null || old.asOf < asOf)
        ? new Entry(v, asOf) : old);
    return v;
  }

  /** Applies watch events, in revision order, then publishes the revision they reach. */
  void apply(List<WatchEvent> events, Consumer<String> forGroups) {
    long top = 0;
    for (WatchEvent e : events) {
      KeyValue kv = e.kv();
      String k = kv.keyString();
      long rev = kv.modRevision();
      int stripe = stripe(k.hashCode());
      eventRevs.accumulateAndGet(stripe, rev, Math::max);
      Optional<KeyValue> v = e.type() == WatchEvent.Type.PUT ? Optional.of(kv) : Optional.empty();
      // Events up to the fresh start (a resumed watch replays them for the kernel's sake) are
      // older than everything cached since: they change nothing here.
      boolean insert = mirrored.test(k) && rev > liveFrom;
      keys.compute(k, (kk, old) -> old == null ? (insert && live ? new Entry(v, rev) : null)
          : old.asOf < rev ? new Entry(v, rev) : old);
      forGroups.accept(k);
      top = Math.max(top, rev);
    }
    if (top > 0) {
      advance(top);
    }
  }

  private void advance(long revision) {
    progress.lock();
    try {
      if (revision > watchRevision) {
        watchRevision = revision;
        advanced.signalAll();
      }
    } finally {
      progress.unlock();
    }
  }

  /**
   * Waits until the watch has applied every change up to {@code revision}; false if it did not
   * within {@code timeoutMs} or no watch runs (then the caller must invalidate what it wrote).
   */
  public boolean awaitRevision(long revision, long timeoutMs) {
    if (watchRevision >= revision) {
      return live;
    }
    NoWait.check();
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    progress.lock();
    try {
      // Only events advance the watch revision here, never a progress notice: etcd before
      // 3.4.25 / 3.5.8 can send a requested notice ahead of events it has not sent yet (etcd
      // issue 15220), and trusting it served a just-deleted entry (fio: unlink, then open
      // O_CREAT of the same name answered ENOENT about once in 10,000).
      while (watchRevision < revision && live) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        advanced.awaitNanos(left);
      }
      return live;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } finally {
      progress.unlock();
    }
  }

  /** Loads a group on a miss; a failure is thrown, never cached. */
  @FunctionalInterface
  public interface Loader<T, E extends Exception> {
    T load() throws E;
  }

  /** The group slot of an inode's extent map. */
  public static long extentsSlot(long ino) {
    return ino * 4;
  }

  /** The group slot of an inode's xattrs. */
  public static long xattrsSlot(long ino) {
    return ino * 4 + 1;
  }

  /** The group slot of a directory's listing (its entries, for readdir). */
  public static long listingSlot(long ino) {
    return ino * 4 + 2;
  }

  /**
   * Which groups a key belongs to, dropped with it: set by the watch, which drops them on each
   * event the same way; an explicit drop of a key (a commit whose revision the watch did not
   * show in time) drops them too.
   */
  public void setGroupsOf(Consumer<String> dropGroupsOf) {
    this.dropGroupsOf = dropGroupsOf;
  }

  /** A per-inode group (extent map, xattrs), loaded by {@code loader} on a miss. */
  @SuppressWarnings("unchecked")
  public <T, E extends Exception> T group(long slot, Loader<T, E> loader) throws E {
    Object hit = groups.get(slot);
    if (hit != null) {
      return (T) hit;
    }
    int stripe = stripe(Long.hashCode(slot));
    long e = epochs.get(stripe);
    T v = loader.load();
    groups.compute(slot, (s, old) -> live && epochs.get(stripe) == e ? v : old);
    return v;
  }

  /** The cached group in a slot, or null; a caller validates it (extent maps by revision). */
  public Object peekGroup(long slot) {
    return live ? groups.get(slot) : null;
  }

  /**
   * Caches a group its owner knows to be current as of a commit, for groups validated on use
   * (an extent map carries the inode revision it belongs to).
   */
  public void putGroup(long slot, Object value) {
    if (live) {
      groups.put(slot, value);
    }
  }

  /**
   * Caches a group known as of a watch event unless one is cached already (a loaded group may
   * be newer; any later event under the group drops it as usual).
   */
  public void putGroupIfAbsent(long slot, Object value) {
    if (live) {
      groups.putIfAbsent(slot, value);
    }
  }

  /** The drop epoch of a group's slot, for {@link #primeGroup}. */
  public long groupEpoch(long slot) {
    return epochs.get(stripe(Long.hashCode(slot)));
  }

  /** Caches a group unless its slot was dropped since {@code epoch} was read. */
  public void primeGroup(long slot, Object value, long epoch) {
    int stripe = stripe(Long.hashCode(slot));
    groups.compute(slot, (s, old) -> live && epochs.get(stripe) == epoch ? value : old);
  }

  public void invalidate(String key) {
    String scope = scopeOf.apply(key);
    synchronized (scopes) {
      drops++;
      if (scope != null) {
        complete.remove(scope);
      }
      runHook();
      epochs.incrementAndGet(stripe(key.hashCode()));
      keys.remove(key);
    }
    dropGroupsOf.accept(key);
  }

  private void runHook() {
    Runnable hook = whileDropping;
    if (hook != null) {
      hook.run();
    }
  }

  public void invalidate(byte[] key) {
    invalidate(str(key));
  }

  public void invalidateGroup(long slot) {
    epochs.incrementAndGet(stripe(Long.hashCode(slot)));
    groups.remove(slot);
  }

  /** Drops everything keyed under {@code prefix} (a range delete names no single key). */
  public void invalidatePrefix(byte[] prefix) {
    String p = str(prefix);
    synchronized (scopes) {
      drops++;
      complete.removeIf(scope -> scope.startsWith(p) || p.startsWith(scope));
      List<String> doomed = keys.keySet().stream().filter(k -> k.startsWith(p)).toList();
      doomed.forEach(this::invalidate);
    }
  }

  public void invalidateAll() {
    synchronized (scopes) {
      drops++;
      complete.clear();
      large.clear();
      runHook();
      for (int i = 0; i < STRIPES; i++) {
        epochs.incrementAndGet(i);
      }
      keys.clear();
      groups.clear();
    }
  }

  public boolean isLive() {
    return live;
  }

  /** The revision the cache last started at, empty: events up to it change nothing in it. */
  long liveFrom() {
    return liveFrom;
  }

  /** The revision up to which the watch has applied every change. */
  public long watchRevision() {
    return watchRevision;
  }

  /** Stops serving: without a watch nothing may be cached. Wakes every waiter. */
  void goDark() {
    progress.lock();
    try {
      live = false;
      invalidateAll();
      advanced.signalAll();
    } finally {
      progress.unlock();
    }
  }

  /** Serves again, empty, with a watch that delivers every change after {@code revision}. */
  void goLive(long revision) {
    invalidateAll();
    liveFrom = revision;
    advance(revision);
    live = true;
  }

  private static int stripe(int hash) {
    return Math.floorMod(hash, STRIPES);
  }

  static String str(byte[] key) {
    return new String(key, StandardCharsets.UTF_8);
  }
}

package io.etcfs.core.fs.cache;

import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.RangeResult;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * This node's cache of metadata keys (inodes, entries, directory times: present or absent) and of
 * per-inode groups (extent maps, xattrs). Kept coherent by one watch on the filesystem prefix
 * ({@link CacheWatch}), never by time-outs: an event drops what it names, a watch failure drops
 * everything, and while no watch runs nothing is cached at all.
 *
 * <p>A fill races with invalidation (read the old value, the event drops the key, the fill puts
 * the old value back). Each fill therefore remembers the stripe epoch before its read and stores
 * only if no invalidation of that stripe happened since; the check and the store are one atomic
 * {@code compute} on the key, and invalidation bumps the epoch before it removes.
 */
public final class MetaCache implements KvSource {
  private static final int STRIPES = 1024;
  /** A bound on memory, not on staleness: past it the key cache starts over. */
  private static final int MAX_KEYS = 200_000;

  private final MetaStore store;
  private final Map<String, Optional<KeyValue>> keys = new ConcurrentHashMap<>();
  private final Map<Long, Object> groups = new ConcurrentHashMap<>();
  private final AtomicLongArray epochs = new AtomicLongArray(STRIPES);
  private volatile boolean live;

  public MetaCache(MetaStore store) {
    this.store = store;
  }

  @Override
  public Optional<KeyValue> get(byte[] key) {
    String k = str(key);
    Optional<KeyValue> hit = keys.get(k);
    return hit != null ? hit : load(key, k);
  }

  @Override
  public RangeResult range(byte[] from, byte[] to, int limit) {
    return store.range(from, to, limit);
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
    long e = stamp(k.hashCode());
    Optional<KeyValue> v = store.get(key);
    if (keys.size() > MAX_KEYS) {
      keys.clear();
    }
    keys.compute(k, (kk, old) -> current(k.hashCode(), e) ? v : old);
    return v;
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

  /** A per-inode group (extent map, xattrs), loaded by {@code loader} on a miss. */
  @SuppressWarnings("unchecked")
  public <T, E extends Exception> T group(long slot, Loader<T, E> loader) throws E {
    Object hit = groups.get(slot);
    if (hit != null) {
      return (T) hit;
    }
    long e = stamp(Long.hashCode(slot));
    T v = loader.load();
    groups.compute(slot, (s, old) -> current(Long.hashCode(slot), e) ? v : old);
    return v;
  }

  public void invalidate(String key) {
    epochs.incrementAndGet(Math.floorMod(key.hashCode(), STRIPES));
    keys.remove(key);
  }

  public void invalidate(byte[] key) {
    invalidate(str(key));
  }

  public void invalidateGroup(long slot) {
    epochs.incrementAndGet(Math.floorMod(Long.hashCode(slot), STRIPES));
    groups.remove(slot);
  }

  /** Drops everything keyed under {@code prefix} (a range delete names no single key). */
  public void invalidatePrefix(byte[] prefix) {
    String p = str(prefix);
    List<String> doomed = keys.keySet().stream().filter(k -> k.startsWith(p)).toList();
    doomed.forEach(this::invalidate);
  }

  public void invalidateAll() {
    for (int i = 0; i < STRIPES; i++) {
      epochs.incrementAndGet(i);
    }
    keys.clear();
    groups.clear();
  }

  public boolean isLive() {
    return live;
  }

  /** Whether a watch runs; without one nothing may be cached. */
  void setLive(boolean value) {
    if (!value) {
      live = false;
      invalidateAll();
    } else {
      invalidateAll();
      live = true;
    }
  }

  private long stamp(int hash) {
    return epochs.get(Math.floorMod(hash, STRIPES));
  }

  private boolean current(int hash, long stamp) {
    return live && stamp(hash) == stamp;
  }

  static String str(byte[] key) {
    return new String(key, StandardCharsets.UTF_8);
  }
}

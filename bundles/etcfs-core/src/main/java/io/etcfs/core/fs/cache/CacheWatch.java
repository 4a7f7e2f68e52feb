package io.etcfs.core.fs.cache;

import io.etcfs.core.fs.meta.Codec;
import io.etcfs.core.fs.meta.FsKeys;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.MetaStoreException;
import io.etcfs.spi.meta.Watch;
import io.etcfs.spi.meta.WatchEvent;
import io.etcfs.spi.meta.WatchListener;
import io.etcfs.spi.vfs.Attr;
import io.etcfs.support.retry.Backoff;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;

/**
 * The one watch on the filesystem prefix that keeps {@link MetaCache} coherent with every other
 * node. On a watch failure (compaction, cancel, lost connection) the cache goes dark (serves
 * nothing, stores nothing) until a new watch runs, then starts empty: an empty cache plus a
 * watch covering every change after a revision read just before it is a fresh read of
 * everything, so the cache misses nothing.
 *
 * <p>The listener (the kernel's caches, through {@code KernelNotices}) misses nothing either:
 * the new watch resumes right after the last event applied, so the changes made while no watch
 * ran are delivered too — the cache ignores those older than its fresh start, the kernel drops
 * what they make stale. Only when etcd has compacted that history away does the new watch start
 * at the fresh revision; that gap is logged, and the kernel's timeouts bound it.
 */
public final class CacheWatch implements WatchListener, AutoCloseable {
  private static final Logger LOG = Logger.getLogger(CacheWatch.class.getName());

  private final MetaStore store;
  private final FsKeys keys;
  private final MetaCache cache;
  private final ScheduledExecutorService restarter;
  private volatile Watch watch;
  private volatile boolean closed;
  /** After a failed restart, the next: 100 ms, doubling to 2 s. */
  private static final Backoff RESTART = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(2));
  /** Restarts failed in a row. */
  private int failures;
  /** The newest revision whose events were all applied and told; 0 before the first watch. */
  private volatile long applied;
  /** The history after {@link #applied} may be gone: the next watch starts afresh. */
  private volatile boolean compacted;
  private volatile java.util.function.Consumer<List<WatchEvent>> listener = e -> { };

  public CacheWatch(MetaStore store, FsKeys keys, MetaCache cache) {
    this.store = store;
    this.keys = keys;
    this.cache = cache;
    cache.setGroupsOf(this::invalidateGroups);
    this.restarter = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "etcfs-cache-watch");
      t.setDaemon(true);
      return t;
    });
  }

  /** Starts the watch; if the store is down the cache stays dark and the start is retried. */
  public void start() {
    restart();
  }

  private synchronized void restart() {
    if (closed) {
      return;
    }
    try {
      Watch old = watch;
      if (old != null) {
        old.close();
      }
      // The watch starts right after a revision read now, so that everything cached from here
      // on is known to be covered by it.
      byte[] record = keys.record();
      long now = store.range(record, Keys.after(record), 1).revision();
      long from = applied > 0 && !compacted ? Math.min(applied, now) + 1 : now + 1;
      if (applied > 0 && compacted) {
        LOG.warning("cache watch starts afresh at revision " + (now + 1) + ": etcd compacted the"
            + " changes after revision " + applied + ", so the kernel is not told of those made"
            + " while no watch ran (its entry and attribute timeouts bound them)");
      }
      compacted = false;
      applied = from - 1;
      watch = store.watch(keys.prefix(), from, this);
      cache.goLive(now);
      failures = 0;
      if (from <= now) {
        LOG.info("cache watch resumed at revision " + from + ": the changes made while no"
            + " watch ran are told to the kernel's caches");
      }
    } catch (MetaStoreException e) {
      LOG.warning("cache watch not running, metadata uncached: " + e.getMessage());
      restarter.schedule(this::restart, RESTART.delay(++failures).toMillis(),
          TimeUnit.MILLISECONDS);
    }
  }

  /** Who else sees the events, after the cache has applied them (must not block). */
  public void setListener(java.util.function.Consumer<List<WatchEvent>> listener) {
    this.listener = listener;
  }

  @Override
  public void onEvents(List<WatchEvent> events) {
    long token = cache.scopeToken(); // before the events are applied: see primeNewInodes
    cache.apply(events, this::invalidateGroups);
    primeNewInodes(events, token);
    listener.accept(events);
    long last = events.get(events.size() - 1).kv().modRevision();
    if (last > applied) {
      applied = last; // a revision's events come whole, in one response
    }
  }

  /**
   * What an inode created elsewhere has as of its creation, known without a read, as the creating
   * node knows it of its own creates ({@code Creates}): no xattrs (unless its creating transaction
   * wrote some, in the same events), so the getxattr every {@code ls -l} makes of it costs no
   * round trip here; and, for a directory, no entries and no times key, so its entry scope is
   * complete from then on: every look-up in it (another node's {@code git status} or {@code
   * find} of a tree this node saw made) is answered from memory, where each directory's first
   * one read its whole scope. Sound for the reasons {@link MetaCache#primeNew} gives — no
   * revision before the create can hold a key of the new inode, and every later event inserts
   * its keys (they are mirrored) — once the events of this batch are applied, and only if no
   * drop raced since {@code token}, taken before they were (a drop may have removed a key of
   * the new directory this batch inserted).
   */
  private void primeNewInodes(List<WatchEvent> events, long token) {
    java.util.Set<Long> fresh = new java.util.HashSet<>();
    java.util.Map<Long, Long> dirs = new java.util.HashMap<>();
    java.util.Set<Long> withXattrs = new java.util.HashSet<>();
    for (WatchEvent e : events) {
      String rel = keys.relative(e.kv().keyString());
      long ino = inoOf(rel);
      if (ino < 0) {
        continue;
      }
      if (rel.charAt(0) == 'x') {
        withXattrs.add(ino);
      } else if (rel.charAt(0) == 'i' && e.type() == WatchEvent.Type.PUT
          && e.kv().createRevision() == e.kv().modRevision()
          && e.kv().modRevision() > cache.liveFrom()) { // not one replayed from before the start
        fresh.add(ino);
        if (isDirectory(e.kv().value())) {
          dirs.put(ino, e.kv().modRevision());
        }
      }
    }
    for (var d : dirs.entrySet()) {
      cache.primeNew(keys.direntPrefix(d.getKey()), List.of(keys.dirTimes(d.getKey())),
          d.getValue(), token);
    }
    fresh.removeAll(withXattrs);
    for (long ino : fresh) {
      cache.putGroupIfAbsent(MetaCache.xattrsSlot(ino), java.util.Map.of());
    }
  }

  private static boolean isDirectory(byte[] inode) {
    try {
      return (Codec.decodeInode(inode).mode() & Attr.S_IFMT) == Attr.S_IFDIR;
    } catch (IllegalArgumentException e) {
      return false; // read, and reported, where it is used
    }
  }

  /** The inode a relative key {@code c/<16 hex>...} names, or -1. */
  private static long inoOf(String rel) {
    if (rel == null || rel.length() < 18 || rel.charAt(1) != '/') {
      return -1;
    }
    try {
      return Long.parseUnsignedLong(rel.substring(2, 18), 16);
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  private void invalidateGroups(String key) {
    String rel = keys.relative(key);
    long ino = inoOf(rel);
    if (ino < 0) {
      return;
    }
    switch (rel.charAt(0)) {
      case 'i', 'e' -> cache.invalidateGroup(MetaCache.extentsSlot(ino));
      case 'x' -> cache.invalidateGroup(MetaCache.xattrsSlot(ino));
      case 'd' -> cache.invalidateGroup(MetaCache.listingSlot(ino));
      default -> { }
    }
  }

  @Override
  public void onError(MetaStoreException error) {
    if (error.kind() == MetaStoreException.Kind.COMPACTED) {
      compacted = true;
    }
    LOG.warning("cache watch ended (" + error.getMessage() + "): dropping all cached metadata");
    cache.goDark();
    if (!closed) {
      restarter.schedule(this::restart, 10, TimeUnit.MILLISECONDS);
    }
  }

  /** Whether the cache is served (for tests that wait for a restart). */
  public boolean running() {
    return cache.isLive();
  }

  @Override
  public synchronized void close() {
    closed = true;
    restarter.shutdownNow();
    Watch w = watch;
    if (w != null) {
      w.close();
    }
    cache.goDark();
  }
}

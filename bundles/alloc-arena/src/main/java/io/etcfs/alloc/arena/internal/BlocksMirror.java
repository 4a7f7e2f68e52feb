package io.etcfs.alloc.arena.internal;

import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.MetaStoreException;
import io.etcfs.spi.meta.RangeResult;
import io.etcfs.spi.meta.Watch;
import io.etcfs.spi.meta.WatchEvent;
import io.etcfs.spi.meta.WatchListener;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.concurrent.Executor;

/**
 * Keeps every arena's reverse-map mirror current: a paged load of {@code blocks/}, then a watch
 * from the first page's revision on. Pages are read at different revisions; replaying the watch
 * from the earliest one is still right because, per key, the last event wins and a key with no
 * later event was as read. When the watch ends (compaction, connection loss) the load and the
 * watch start over on the executor; owned arenas are rebuilt from a fresh read under the table
 * lock, since their free runs depend on an exact reverse map.
 */
final class BlocksMirror implements WatchListener {
  private static final Logger LOG = System.getLogger(BlocksMirror.class.getName());
  private static final int PAGE = 1000;

  private final MetaStore store;
  private final ArenaKeys keys;
  private final ArenaTable table;
  private final Executor executor;
  private volatile Watch watch;
  private volatile boolean closed;
  private final Object progress = new Object();
  /** Every change up to this revision is in the mirror. */
  private long applied;

  BlocksMirror(MetaStore store, ArenaKeys keys, ArenaTable table, Executor executor) {
    this.store = store;
    this.keys = keys;
    this.table = table;
    this.executor = executor;
  }

  void start() {
    long revision = load();
    advance(revision);
    Watch w = store.watch(keys.blocksPrefix(), revision + 1, this);
    watch = w;
    if (closed) {
      w.close();
    }
  }

  void close() {
    closed = true;
    Watch w = watch;
    if (w != null) {
      w.close();
    }
  }

  /** Reads one arena's reverse map exactly, for a claim or a rebuild. */
  Snapshot read(int arena) {
    Geometry g = table.geometry;
    RangeResult r = store.range(keys.block(g.arenaStart(arena)), keys.block(g.arenaEnd(arena)), 0);
    return new Snapshot(parse(r.kvs()).getOrDefault(arena, new TreeMap<>()), r.revision());
  }

  /**
   * Reads the part of an arena's reverse map that can cover blocks in [{@code from}, {@code
   * end}): from the key the mirror has at or before {@code from}, if that key still exists in the
   * read (keys never overlap, so no earlier key reaches past it), else from the arena's start.
   * Either way the answer comes from the store, never from the mirror alone.
   */
  TreeMap<Long, Ref> readCovering(int arena, long from, long end) {
    Long floor = table.locked(() -> table.arena(arena).refs().floorKey(from));
    if (floor != null) {
      RangeResult r = store.range(keys.block(floor), keys.block(end), 0);
      TreeMap<Long, Ref> refs = parse(r.kvs()).getOrDefault(arena, new TreeMap<>());
      if (refs.containsKey(floor)) {
        return refs;
      }
    }
    return readUpTo(arena, end);
  }

  /**
   * The stored values of the keys at {@code starts} (those that exist): one read of the span
   * between them when it holds few other keys, else one read per key.
   */
  Map<Long, Ref> readKeys(int arena, SortedSet<Long> starts) {
    Map<Long, Ref> out = new HashMap<>();
    if (starts.size() > 1) {
      int limit = Math.max(64, 8 * starts.size());
      RangeResult r = store.range(keys.block(starts.first()), keys.block(starts.last() + 1),
          limit);
      if (!r.more()) {
        TreeMap<Long, Ref> refs = parse(r.kvs()).getOrDefault(arena, new TreeMap<>());
        starts.forEach(s -> {
          if (refs.containsKey(s)) {
            out.put(s, refs.get(s));
          }
        });
        return out;
      }
    }
    for (long s : starts) {
      store.get(keys.block(s)).ifPresent(kv -> out.put(s, Ref.decode(kv.valueString())));
    }
    return out;
  }

  /** Waits until the watch has applied every change up to {@code revision}. */
  boolean awaitRevision(long revision, long timeoutMs) {
    long deadline = System.nanoTime() + timeoutMs * 1_000_000;
    synchronized (progress) {
      while (applied < revision) {
        long left = deadline - System.nanoTime();
        if (left <= 0 || closed) {
          return false;
        }
        try {
          progress.wait(Math.max(1, left / 1_000_000));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return false;
        }
      }
      return true;
    }
  }

  private void advance(long revision) {
    synchronized (progress) {
      if (revision > applied) {
        applied = revision;
        progress.notifyAll();
      }
    }
  }

  /** Reads the part of an arena's reverse map that can cover blocks before {@code end}. */
  TreeMap<Long, Ref> readUpTo(int arena, long end) {
    byte[] from = keys.block(table.geometry.arenaStart(arena));
    RangeResult r = store.range(from, keys.block(end), 0);
    return parse(r.kvs()).getOrDefault(arena, new TreeMap<>());
  }

  record Snapshot(TreeMap<Long, Ref> refs, long revision) {}

  @Override
  public void onEvents(List<WatchEvent> events) {
    List<ArenaTable.Event> parsed = new ArrayList<>();
    long top = 0;
    for (WatchEvent e : events) {
      top = Math.max(top, e.kv().modRevision());
      long start = keys.blockStart(e.kv().key());
      int arena = start < 0 ? -1 : table.geometry.arenaOf(start);
      Ref ref = e.type() == WatchEvent.Type.PUT ? Ref.decode(e.kv().valueString()) : null;
      if (arena >= 0 && (ref != null || e.type() == WatchEvent.Type.DELETE)) {
        parsed.add(new ArenaTable.Event(arena, new RefChange(start, ref), e.kv().modRevision()));
      }
    }
    table.apply(parsed);
    advance(top);
  }

  @Override
  public void onError(MetaStoreException error) {
    if (closed) {
      return;
    }
    LOG.log(Level.WARNING, "watch on the reverse map ended (" + error.getMessage()
        + "); reloading it");
    executor.execute(this::restart);
  }

  private void restart() {
    try {
      if (!closed) {
        start();
        for (Arena a : table.owned()) {
          table.freeing(() -> {
            Snapshot s = read(a.index);
            a.own(a.claimRevision(), s.refs(), s.revision());
          });
        }
      }
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "reloading the reverse map failed; retrying: " + e.getMessage());
      executor.execute(this::restart);
    }
  }

  private long load() {
    Map<Integer, TreeMap<Long, Ref>> all = new HashMap<>();
    byte[] from = keys.blocksPrefix();
    byte[] end = Keys.prefixEnd(from);
    long first = -1;
    while (true) {
      RangeResult page = store.range(from, end, PAGE);
      first = first < 0 ? page.revision() : first;
      parse(page.kvs()).forEach((a, refs) -> all.computeIfAbsent(a, x -> new TreeMap<>())
          .putAll(refs));
      if (!page.more() || page.kvs().isEmpty()) {
        break;
      }
      byte[] last = page.kvs().get(page.kvs().size() - 1).key();
      from = Keys.after(last);
    }
    table.locked(() -> {
      for (int i = 0; i < table.arenaCount(); i++) {
        if (!table.arena(i).owned()) {
          table.arena(i).replaceRefs(all.getOrDefault(i, new TreeMap<>()));
        }
      }
    });
    return first;
  }

  private Map<Integer, TreeMap<Long, Ref>> parse(List<KeyValue> kvs) {
    Map<Integer, TreeMap<Long, Ref>> out = new HashMap<>();
    for (KeyValue kv : kvs) {
      long start = keys.blockStart(kv.key());
      int arena = start < 0 ? -1 : table.geometry.arenaOf(start);
      Ref ref = arena < 0 ? null : Ref.decode(kv.valueString());
      if (ref != null && arena < table.arenaCount()) {
        out.computeIfAbsent(arena, a -> new TreeMap<>()).put(start, ref);
      }
    }
    return out;
  }
}

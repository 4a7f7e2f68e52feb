package io.etcfs.alloc.arena.internal;

import io.etcfs.alloc.arena.internal.BlocksMirror.Snapshot;
import io.etcfs.alloc.arena.internal.Geometry.Piece;
import io.etcfs.spi.alloc.Extent;
import io.etcfs.spi.alloc.NoSpaceException;
import io.etcfs.spi.meta.MetaStoreException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.IntFunction;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Every arena of the filesystem and this node's in-memory allocation state, behind one lock.
 * Everything done under it is in-memory and takes microseconds, except claiming an arena and
 * rebuilding one (one or two bounded etcd round trips: once per arena filled, and after a commit
 * that released blocks the watch had not shown yet): a single lock keeps the watch, the commits
 * and the allocations trivially consistent, which matters more here than the stall of a read.
 */
final class ArenaTable {
  /** Claims one more arena for this node, or answers null when none is left. */
  interface Claimer {
    Arena claim();
  }

  /** One reverse-map change seen by the watch. */
  record Event(int arena, RefChange change, long revision) {}

  private static final Logger LOG = System.getLogger(ArenaTable.class.getName());

  final ReentrantLock lock = new ReentrantLock();
  final Geometry geometry;
  private final Arena[] arenas;
  private final Set<Arena> owned = new LinkedHashSet<>();
  private final LongSupplier clock;
  private Arena current;

  ArenaTable(Geometry geometry, LongSupplier clock) {
    this.geometry = geometry;
    this.clock = clock;
    this.arenas = new Arena[geometry.arenas()];
    for (int i = 0; i < arenas.length; i++) {
      arenas[i] = new Arena(i, geometry.arenaStart(i), geometry.arenaEnd(i));
    }
  }

  <T> T locked(Supplier<T> action) {
    lock.lock();
    try {
      return action.get();
    } finally {
      lock.unlock();
    }
  }

  void locked(Runnable action) {
    locked(() -> {
      action.run();
      return null;
    });
  }

  Arena arena(int index) {
    return arenas[index];
  }

  int arenaCount() {
    return arenas.length;
  }

  long now() {
    return clock.getAsLong();
  }

  List<Arena> owned() {
    return locked(() -> List.copyOf(owned));
  }

  void own(Arena arena, long claimRev, Map<Long, Ref> snapshot, long revision) {
    locked(() -> {
      arena.own(claimRev, snapshot, revision);
      arena.lastActivity = now();
      owned.add(arena);
    });
  }

  void disown(Arena arena) {
    locked(() -> {
      arena.disown();
      owned.remove(arena);
      if (current == arena) {
        current = null;
      }
    });
  }

  /** All or nothing: on failure every block reserved so far goes back. */
  List<Extent> allocate(long blocks, long goal, Claimer claimer) throws NoSpaceException {
    lock.lock();
    List<Extent> got = new ArrayList<>();
    try {
      long need = fromGoal(blocks, goal, got);
      for (Arena a : byMostFree()) {
        need -= take(a, need, -1, got);
      }
      while (need > 0) {
        Arena a = claimer.claim();
        if (a == null) {
          throw noSpace(blocks);
        }
        need -= take(a, need, -1, got);
      }
      return merge(got);
    } catch (NoSpaceException | RuntimeException e) {
      got.forEach(x -> arenas[geometry.arenaOf(x.start())].abandon(x.start(), x.end(), now()));
      throw e;
    } finally {
      lock.unlock();
    }
  }

  private long fromGoal(long blocks, long goal, List<Extent> got) {
    int index = goal < 0 ? -1 : geometry.arenaOf(goal);
    Arena a = index >= 0 && arenas[index].owned() ? arenas[index] : current;
    if (a == null || !a.owned()) {
      return blocks;
    }
    long from = index >= 0 && a == arenas[index] && a.isFree(goal) ? goal : a.cursor();
    return blocks - take(a, blocks, from, got);
  }

  private long take(Arena a, long need, long from, List<Extent> got) {
    if (need <= 0 || a.free() == 0) {
      return 0;
    }
    List<Extent> taken = a.take(need, from < 0 ? a.cursor() : from, now());
    got.addAll(taken);
    current = a;
    return taken.stream().mapToLong(Extent::length).sum();
  }

  private List<Arena> byMostFree() {
    List<Arena> list = new ArrayList<>(owned);
    list.sort(Comparator.comparingLong(Arena::free).reversed());
    return list;
  }

  private NoSpaceException noSpace(long blocks) {
    return new NoSpaceException("no space for " + blocks + " blocks: this node's "
        + owned.size() + " arenas are full and no unclaimed arena has a free block (free on the"
        + " device: " + freeBlocks() + " of " + geometry.totalBlocks()
        + " blocks, all in arenas other nodes hold)");
  }

  private static List<Extent> merge(List<Extent> extents) {
    List<Extent> out = new ArrayList<>();
    for (Extent e : extents) {
      Extent last = out.isEmpty() ? null : out.get(out.size() - 1);
      if (last != null && last.end() == e.start()) {
        out.set(out.size() - 1, new Extent(last.start(), last.length() + e.length()));
      } else {
        out.add(e);
      }
    }
    return out;
  }

  /** Checks that a piece about to be recorded is this node's reservation. */
  void checkReserved(Piece piece, long ino) {
    Arena a = arenas[piece.arena()];
    if (!a.owned() || !a.isReserved(piece.start(), piece.end())) {
      throw new IllegalStateException("blocks " + piece.start() + "+" + piece.length()
          + " were not reserved by this node's allocator: refusing to record them for inode "
          + Long.toHexString(ino));
    }
  }

  /**
   * Ends the reservations of the referenced pieces and makes the released blocks of this node's
   * own arenas free before returning. The watch would free them too, but later and at a time
   * nobody can bound, and waiting for it is not enough: the commit's revision is unknown here, and
   * once the event frees the blocks another allocation may record them again, so "no longer
   * recorded" can flip back before a waiter looks. Instead an own arena that still holds released
   * blocks (recorded, or committed earlier and not shown by the watch yet) is rebuilt from a read
   * made under the lock: that read is at or after the commit and after every earlier {@link
   * #committed}, so it is exact, and the watch events it already reflects are skipped when they
   * come ({@link Arena#applyEvent}). If the read fails the blocks stay taken until the watch
   * delivers the release.
   */
  void committed(List<Piece> referenced, Map<Integer, RunSet> released,
      IntFunction<Snapshot> reader) {
    // reader null: the watch has applied the commit already, and with it every release.
    locked(() -> {
      referenced.forEach(p -> arenas[p.arena()].committed(p.start(), p.end(), now()));
      released.forEach((index, runs) -> {
        Arena a = arenas[index];
        if (reader != null && a.owned()
            && runs.runs().stream().anyMatch(r -> a.held(r[0], r[1]))) {
          resync(a, reader);
        }
      });
    });
  }

  private void resync(Arena a, IntFunction<Snapshot> reader) {
    try {
      Snapshot s = reader.apply(a.index);
      a.own(a.claimRevision(), s.refs(), s.revision());
      a.lastActivity = now();
    } catch (MetaStoreException e) {
      LOG.log(Level.WARNING, "could not reread arena {0} after a release ({1}); its blocks"
          + " become free when the watch shows the release", a.index, e.getMessage());
    }
  }

  void abandon(List<Piece> pieces) {
    locked(() -> {
      for (Piece p : pieces) {
        Arena a = arenas[p.arena()];
        if (a.owned()) {
          a.abandon(p.start(), p.end(), now());
        }
      }
    });
  }

  void apply(List<Event> events) {
    locked(() -> {
      long now = now();
      for (Event e : events) {
        if (e.arena() < arenas.length) {
          arenas[e.arena()].applyEvent(e.change(), e.revision(), now);
        }
      }
    });
  }

  /** One arena's use, for the shell: blocks in use (referenced, or reserved here). */
  record Usage(int arena, long size, long used, long longestFree) {}

  List<Usage> usage() {
    return locked(() -> {
      List<Usage> out = new ArrayList<>();
      for (Arena a : arenas) {
        out.add(new Usage(a.index, a.end - a.start,
            Math.min(a.end - a.start, a.referenced() + a.reserved() + a.landing()),
            a.longestFreeRun()));
      }
      return out;
    });
  }

  /** Device blocks neither referenced by any inode nor reserved here. */
  long freeBlocks() {
    return locked(() -> {
      long used = 0;
      for (Arena a : arenas) {
        used += a.referenced() + a.reserved() + a.landing();
      }
      return Math.max(0, geometry.totalBlocks() - used);
    });
  }
}

package io.etcfs.alloc.arena.internal;

import io.etcfs.alloc.arena.internal.Geometry.Piece;
import io.etcfs.spi.alloc.Allocator;
import io.etcfs.spi.alloc.Extent;
import io.etcfs.spi.alloc.NoSpaceException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
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


  final ReentrantLock lock = new ReentrantLock();
  /**
   * Writes in place (read side: {@link #overwrite}) against whatever can make a referenced block
   * of an owned arena free here or let an owned arena go (write side: {@link #freeing}). Always
   * taken before {@link #lock}, never while holding it.
   */
  private final ReentrantReadWriteLock inPlace = new ReentrantReadWriteLock();
  final Geometry geometry;
  private final Arena[] arenas;
  private final Set<Arena> owned = new LinkedHashSet<>();
  private final LongSupplier clock;
  private Arena current;
  /** Blocks promised to buffered writes: the owned arenas' free blocks always cover them. */
  private long promised;

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

  /**
   * Runs {@code action} under the lock once every open in-place permit has closed, and lets no
   * new one open meanwhile: for anything that frees referenced blocks of an owned arena (a watch
   * event, a rebuild from a read) or lets an owned arena go. A write in place that began before
   * has returned; one that begins after checks its inode lock after that free was seen here,
   * which came from a commit that needed the lock gone first.
   */
  void freeing(Runnable action) {
    inPlace.writeLock().lock();
    try {
      locked(action);
    } finally {
      inPlace.writeLock().unlock();
    }
  }

  /** As {@link #freeing(Runnable)}, with a result. */
  <T> T freeing(Supplier<T> action) {
    inPlace.writeLock().lock();
    try {
      return locked(action);
    } finally {
      inPlace.writeLock().unlock();
    }
  }

  /**
   * A permit to overwrite device blocks [{@code start}, {@code end}) of inode {@code ino} in
   * place, or null: they must lie in one arena this node owns and its reverse map must say
   * {@code ino} references every one of them. Until it is closed nothing run through {@link
   * #freeing} can start.
   */
  Allocator.InPlace overwrite(long ino, long start, long end) {
    inPlace.readLock().lock();
    boolean granted = false;
    try {
      granted = locked(() -> referencedBy(ino, start, end));
    } finally {
      if (!granted) {
        inPlace.readLock().unlock();
      }
    }
    if (!granted) {
      return null;
    }
    AtomicBoolean open = new AtomicBoolean(true);
    return () -> {
      if (open.getAndSet(false)) {
        inPlace.readLock().unlock();
      }
    };
  }

  /** Under the lock: every block of [start, end) in one owned arena and referenced by ino. */
  private boolean referencedBy(long ino, long start, long end) {
    int index = geometry.arenaOf(start);
    if (index < 0 || end <= start) {
      return false;
    }
    Arena a = arenas[index];
    if (!a.owned() || end > a.end) {
      return false;
    }
    long at = start;
    while (at < end) {
      Map.Entry<Long, Ref> e = a.refs().floorEntry(at);
      if (e == null || e.getValue().ino() != ino || e.getKey() + e.getValue().length() <= at) {
        return false;
      }
      at = e.getKey() + e.getValue().length();
    }
    return true;
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

  /**
   * All or nothing: on failure every block reserved so far goes back, and the promise spent
   * ({@code covered}, at most what is promised) is promised again.
   */
  List<Extent> allocate(long blocks, long goal, long covered, Claimer claimer)
      throws NoSpaceException {
    lock.lock();
    List<Extent> got = new ArrayList<>();
    long spent = Math.min(Math.max(0, covered), promised);
    promised -= spent;
    try {
      ensure(blocks, claimer);
      long need = fromGoal(blocks, goal, got);
      for (Arena a : byMostFree()) {
        need -= take(a, need, -1, got);
      }
      if (need > 0) {
        throw new IllegalStateException("owned arenas lost " + need + " free blocks");
      }
      return merge(got);
    } catch (NoSpaceException | RuntimeException e) {
      promised += spent;
      got.forEach(x -> arenas[geometry.arenaOf(x.start())].abandon(x.start(), x.end(), now()));
      throw e;
    } finally {
      lock.unlock();
    }
  }

  /** Promises {@code blocks} more to this node's later allocations (see {@link #ensure}). */
  void reserve(long blocks, Claimer claimer) throws NoSpaceException {
    lock.lock();
    try {
      ensure(blocks, claimer);
      promised += blocks;
    } finally {
      lock.unlock();
    }
  }

  void unreserve(long blocks) {
    locked(() -> {
      promised = Math.max(0, promised - blocks);
    });
  }

  long promised() {
    return locked(() -> promised);
  }

  /**
   * Claims arenas until the free blocks of the owned ones cover every promise plus {@code
   * blocks}: a promise is only as good as free blocks this node alone may take, so nothing but
   * the promised allocations may take them, and an arena is let go only if the rest still
   * cover the promises ({@link #spare}).
   */
  private void ensure(long blocks, Claimer claimer) throws NoSpaceException {
    while (ownedFree() - promised < blocks) {
      if (claimer.claim() == null) {
        throw noSpace(blocks);
      }
    }
  }

  private long ownedFree() {
    long free = 0;
    for (Arena a : owned) {
      free += a.free();
    }
    return free;
  }

  /**
   * True if this node may let {@code a} go now: nothing allocated in it is in flight (a write
   * to a reserved block may still reach the device), and the other owned arenas still cover
   * every promise. Under the lock.
   */
  boolean spare(Arena a) {
    return a.owned() && a.reserved() == 0 && ownedFree() - a.free() >= promised;
  }

  /**
   * Blocks the mirror shows neither referenced nor landing in arenas this node does not own:
   * what asking other nodes could bring (their reservations are not known here).
   */
  long freeElsewhere() {
    return locked(() -> {
      long free = 0;
      for (Arena a : arenas) {
        if (!a.owned()) {
          free += Math.max(0, a.end - a.start - a.referenced() - a.landing() - a.reserved());
        }
      }
      return free;
    });
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
        + owned.size() + " arenas have " + ownedFree() + " free blocks, " + promised
        + " of them promised to buffered writes, and no unclaimed arena has a free block");
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

  /** Frees the pieces; {@code keepPromised} of the blocks freed are promised again. */
  void abandon(List<Piece> pieces, long keepPromised) {
    locked(() -> {
      long freed = 0;
      for (Piece p : pieces) {
        Arena a = arenas[p.arena()];
        if (a.owned()) {
          a.abandon(p.start(), p.end(), now());
          freed += p.length();
        }
      }
      promised += Math.min(Math.max(0, keepPromised), freed);
    });
  }

  void apply(List<Event> events) {
    freeing(() -> {
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

  /** Device blocks neither referenced by any inode, nor reserved or promised here. */
  long freeBlocks() {
    return locked(() -> {
      long used = promised;
      for (Arena a : arenas) {
        used += a.referenced() + a.reserved() + a.landing();
      }
      return Math.max(0, geometry.totalBlocks() - used);
    });
  }
}

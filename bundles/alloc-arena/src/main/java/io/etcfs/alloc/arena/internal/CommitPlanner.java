package io.etcfs.alloc.arena.internal;

import io.etcfs.alloc.arena.internal.Geometry.Piece;
import io.etcfs.spi.alloc.Extent;
import io.etcfs.spi.meta.Op;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.IntFunction;
import io.etcfs.alloc.arena.internal.BlocksMirror.Snapshot;
import io.etcfs.spi.meta.MetaStoreException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;

/**
 * The reverse-map operations a commit carries ({@code Allocator.commitOps}): puts recording the
 * referenced pieces, and the deletes and re-puts that releasing blocks makes of the recorded
 * extents, planned against the store; and what a commit that succeeded does to the table.
 */
final class CommitPlanner {
  private static final Logger LOG = System.getLogger(CommitPlanner.class.getName());
  private final ArenaTable table;
  private final BlocksMirror mirror;
  private final ArenaKeys keys;

  CommitPlanner(ArenaTable table, BlocksMirror mirror, ArenaKeys keys) {
    this.table = table;
    this.mirror = mirror;
    this.keys = keys;
  }

  /**
   * Referenced pieces must be this node's reservations. Released ranges are planned against a
   * read of the store, never against the watch-fed mirror, even in this node's own arenas: the
   * node that held the inode's lock before may have split the same extents a moment ago, and
   * the mirror may not have seen it yet. Keys of one inode change only under its lock, so the
   * read stays true until this commit.
   */
  List<Op> commitOps(long ino, List<Extent> referenced, List<Extent> released) {
    List<Op> ops = new ArrayList<>();
    Map<Integer, RunSet> byArena = runsByArena(released);
    List<Piece> pieces = pieces(referenced);
    table.locked(() -> {
      for (Piece p : pieces) {
        RunSet gone = byArena.get(p.arena());
        if (gone != null && !gone.intersect(p.start(), p.end()).isEmpty()) {
          throw new IllegalArgumentException("blocks " + p.start() + "+" + p.length()
              + " are both referenced and released in one commit");
        }
        table.checkReserved(p, ino);
      }
    });
    ops.addAll(referenceOps(ino, coalesce(pieces), byArena));
    byArena.forEach((index, runs) -> addOps(ops,
        ReleasePlan.plan(mirror.readCovering(index, runs.runs().get(0).start(), lastEnd(runs)), runs,
            ino)));
    return ops;
  }

  /**
   * The puts recording {@code merged}: where the inode's recorded extent ends exactly where a
   * piece starts, that key grows instead of a new one being added, so a file written sequentially
   * in many commits keeps one reverse-map key per contiguous run — and releasing it later costs a
   * few operations, not one per commit (etcd allows 128 per transaction). The candidates come
   * from the mirror but their values from the store, all of one arena in one read where they lie
   * close together: keys of one inode change only in commits that also rewrite (and compare) that
   * inode, so the values read stay true until this commit.
   */
  private List<Op> referenceOps(long ino, List<Piece> merged, Map<Integer, RunSet> released) {
    Map<Piece, Long> proposed = new HashMap<>();
    Map<Integer, SortedSet<Long>> byArena = new TreeMap<>();
    table.locked(() -> {
      for (Piece p : merged) {
        Map.Entry<Long, Ref> before = table.arena(p.arena()).refs().floorEntry(p.start() - 1);
        RunSet gone = released.get(p.arena());
        if (before != null && before.getValue().ino() == ino
            && before.getKey() + before.getValue().length() == p.start()
            && (gone == null || gone.intersect(before.getKey(), p.start()).isEmpty())) {
          proposed.put(p, before.getKey());
          byArena.computeIfAbsent(p.arena(), a -> new TreeSet<>()).add(before.getKey());
        }
      }
    });
    Map<Integer, Map<Long, Ref>> stored = new HashMap<>();
    byArena.forEach((arena, starts) -> stored.put(arena, mirror.readKeys(arena, starts)));
    List<Op> ops = new ArrayList<>();
    for (Piece p : merged) {
      Long k = proposed.get(p);
      Ref ref = k == null ? null : stored.get(p.arena()).get(k);
      if (ref != null && ref.ino() == ino && k + ref.length() == p.start()) {
        ops.add(put(k, new Ref(ino, ref.length() + p.length())));
      } else {
        ops.add(put(p.start(), new Ref(ino, p.length())));
      }
    }
    return ops;
  }

  /** Adjacent pieces of one arena become one. */
  private static List<Piece> coalesce(List<Piece> pieces) {
    List<Piece> sorted = new ArrayList<>(pieces);
    sorted.sort(java.util.Comparator.comparingLong(Piece::start));
    List<Piece> out = new ArrayList<>();
    for (Piece p : sorted) {
      Piece last = out.isEmpty() ? null : out.get(out.size() - 1);
      if (last != null && last.arena() == p.arena() && last.end() == p.start()) {
        out.set(out.size() - 1, new Piece(p.arena(), last.start(), p.end()));
      } else {
        out.add(p);
      }
    }
    return out;
  }

  List<Piece> pieces(List<Extent> extents) {
    List<Piece> out = new ArrayList<>();
    extents.forEach(e -> out.addAll(table.geometry.split(e)));
    return out;
  }

  Map<Integer, RunSet> runsByArena(List<Extent> extents) {
    Map<Integer, RunSet> out = new TreeMap<>();
    for (Piece p : pieces(extents)) {
      out.computeIfAbsent(p.arena(), a -> new RunSet()).add(p.start(), p.end());
    }
    return out;
  }

  private static long lastEnd(RunSet runs) {
    List<RunSet.Run> all = runs.runs();
    return all.get(all.size() - 1).end();
  }

  private void addOps(List<Op> ops, List<RefChange> changes) {
    for (RefChange c : changes) {
      ops.add(c.ref() == null ? Op.delete(keys.block(c.start()))
          : put(c.start(), c.ref()));
    }
  }

  private Op put(long start, Ref ref) {
    return Op.put(keys.block(start), ref.encode().getBytes(StandardCharsets.UTF_8));
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
    // reader null: the watch has applied the commit already, and with it every release. A
    // rebuild may free referenced blocks (releases the watch has not shown): after the permits.
    table.freeing(() -> {
      referenced.forEach(p -> table.arena(p.arena()).committed(p.start(), p.end(), table.now()));
      released.forEach((index, runs) -> {
        Arena a = table.arena(index);
        if (reader != null && a.owned()
            && runs.runs().stream().anyMatch(r -> a.held(r.start(), r.end()))) {
          resync(a, reader);
        }
      });
    });
  }

  private void resync(Arena a, IntFunction<Snapshot> reader) {
    try {
      Snapshot s = reader.apply(a.index);
      a.own(a.claimRevision(), s.refs(), s.revision());
      a.lastActivity = table.now();
    } catch (MetaStoreException e) {
      LOG.log(Level.WARNING, "could not reread arena {0} after a release ({1}); its blocks"
          + " become free when the watch shows the release", a.index, e.getMessage());
    }
  }
}

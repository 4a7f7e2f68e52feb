package io.etcfs.core.check;

import io.etcfs.core.fs.meta.FileExtent;
import io.etcfs.spi.alloc.BlockOwner;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Blocks: every extent lies inside the data area and no block is referenced twice (invariant
 * 1); the block ownership records ({@code blocks/}) name exactly the referenced blocks, each
 * with its inode; the allocator's state agrees with them as far as etcd holds it.
 */
final class SpaceCheck {
  /** A run of device blocks [start, end) and who it belongs to. */
  record Run(long start, long end, long ino, String what) {}

  /** No record is longer (alloc-shared's limit; alloc-arena's are shorter than an arena). */
  static final long MAX_RECORD = 65_536;

  private final Model m;
  private final Fixes fixes;
  private final List<Finding> out;
  private final Map<String, Long> stats;
  private final List<Run> refs = new ArrayList<>();
  private final Map<Long, List<Run>> refsByInode = new HashMap<>();
  private final TreeMap<Long, BlockOwner> good = new TreeMap<>();
  /** Extents on blocks another extent references too: their records are not rebuilt. */
  private final java.util.Set<Run> shared = java.util.Collections.newSetFromMap(
      new java.util.IdentityHashMap<>());

  SpaceCheck(Model m, Fixes fixes, List<Finding> out, Map<String, Long> stats) {
    this.m = m;
    this.fixes = fixes;
    this.out = out;
    this.stats = stats;
  }

  void run() {
    extents();
    owners();
    missingOwners();
    long referenced = union(refs);
    long total = m.endBlock() - m.firstBlock();
    stats.put("dataBlocks", total);
    stats.put("referencedBlocks", referenced);
    stats.put("freeBlocks", total - referenced);
    arenaClaims();
    if (m.record.allocBackend().equals("shared")) {
      freeMap();
    }
  }

  private void extents() {
    long count = 0;
    for (Map.Entry<Long, List<Model.Chunk>> e : m.chunks.entrySet()) {
      if (!m.inodes.containsKey(e.getKey())) {
        continue; // extent-no-inode: their blocks are free once the keys go
      }
      for (Model.Chunk c : e.getValue()) {
        for (FileExtent x : c.extents()) {
          count++;
          Run r = new Run(x.deviceBlock(), x.deviceBlock() + x.length(), e.getKey(), "");
          if (r.start() < m.firstBlock() || r.end() > m.endBlock()) {
            out.add(Finding.of("extent-outside", "inode " + r.ino(), "extent at file block "
                + x.fileBlock() + " maps device blocks " + span(r) + ", outside the data area "
                + m.firstBlock() + "-" + (m.endBlock() - 1) + " (not repaired)"));
            continue;
          }
          refs.add(r);
          refsByInode.computeIfAbsent(r.ino(), k -> new ArrayList<>()).add(r);
        }
      }
    }
    stats.put("extents", count);
    refs.sort(Comparator.comparingLong(Run::start));
    Run widest = null;
    for (Run r : refs) {
      if (widest != null && widest.end() > r.start()) {
        shared.add(widest);
        shared.add(r);
        out.add(Finding.of("extent-shared", "block " + r.start(), "inode " + widest.ino()
            + " (blocks " + span(widest) + ") and inode " + r.ino() + " (blocks " + span(r)
            + ") reference the same blocks (not repaired: which one is right is a guess)"));
      }
      if (widest == null || r.end() > widest.end()) {
        widest = r;
      }
    }
  }

  private void owners() {
    BlockOwner prev = null;
    List<Fixes.Change> drop = new ArrayList<>();
    for (Model.Owner mo : m.owners.values()) {
      BlockOwner o = mo.owner();
      String why = null;
      if (o.start() < m.firstBlock() || o.end() > m.endBlock()) {
        why = "owner-outside:lies outside the data area";
      } else if (prev != null && prev.end() > o.start()) {
        why = "owner-overlap:overlaps the record at block " + prev.start();
      } else if (m.record.allocBackend().equals("arena")
          && arena(o.start()) != arena(o.end() - 1)) {
        why = "owner-spans-arena:spans arenas " + arena(o.start()) + "-" + arena(o.end() - 1);
      } else if (covered(o) < o.length()) {
        why = "owner-stray:names inode " + o.inode() + ", whose extent map references "
            + covered(o) + " of its " + o.length() + " blocks";
      }
      if (why == null) {
        good.put(o.start(), o);
      } else {
        int colon = why.indexOf(':');
        out.add(Finding.of(why.substring(0, colon), mo.kv().keyString(), "record of blocks "
            + o.start() + "+" + o.length() + " for inode " + o.inode() + " "
            + why.substring(colon + 1) + " (repair: rebuild from the extent maps)"));
        drop.add(new Fixes.Change(mo.kv().key(), null, mo.kv().modRevision()));
      }
      if (prev == null || o.end() > prev.end()) {
        prev = o;
      }
    }
    if (!drop.isEmpty()) {
      fixes.ownership.addAll(drop);
    }
  }

  /** How many of the record's blocks its inode's extents reference. */
  private long covered(BlockOwner o) {
    long n = 0;
    for (Run r : refsByInode.getOrDefault(o.inode(), List.of())) {
      n += Math.max(0, Math.min(r.end(), o.end()) - Math.max(r.start(), o.start()));
    }
    return n;
  }

  private void missingOwners() {
    for (Run r : refs) {
      if (shared.contains(r)) {
        continue; // a record for either would be a guess of which one is right
      }
      long at = r.start();
      List<long[]> gaps = new ArrayList<>();
      Long k = good.floorKey(r.start());
      for (BlockOwner o : good.tailMap(k == null ? r.start() : k, true).values()) {
        if (o.start() >= r.end()) {
          break;
        }
        if (o.end() <= at || o.inode() != r.ino()) {
          continue;
        }
        if (o.start() > at) {
          gaps.add(new long[] {at, o.start()});
        }
        at = Math.max(at, o.end());
      }
      if (at < r.end()) {
        gaps.add(new long[] {at, r.end()});
      }
      for (long[] g : gaps) {
        out.add(Finding.of("owner-missing", "inode " + r.ino(), "blocks " + g[0] + "-"
            + (g[1] - 1) + " are in its extent map but no ownership record names them for it"
            + " (repair: rebuild from the extent maps)"));
        for (long s = g[0]; s < g[1]; ) {
          long e = Math.min(Math.min(g[1], s + MAX_RECORD), arenaEnd(s));
          fixes.ownership.add(new Fixes.Change(BlockOwner.key(m.space, s),
              new BlockOwner(s, e - s, r.ino()).value(), revisionOf(s)));
          s = e;
        }
      }
    }
  }

  private long revisionOf(long start) {
    Model.Owner o = m.owners.get(start);
    return o == null ? 0 : o.kv().modRevision();
  }

  private long arena(long block) {
    return (block - m.firstBlock()) / m.record.blocksPerArena();
  }

  private long arenaEnd(long block) {
    return m.firstBlock() + (arena(block) + 1) * m.record.blocksPerArena();
  }

  private void arenaClaims() {
    for (Map.Entry<Long, Model.Held> a : m.arenas.entrySet()) {
      if (a.getKey() >= m.record.arenas()) {
        out.add(Finding.of("arena-outside", a.getValue().kv().keyString(), "claims arena "
            + a.getKey() + " of " + m.record.arenas() + " (repair: delete the claim)"));
        fixes.delete("deleted claim of arena " + a.getKey() + ", which does not exist",
            a.getValue().kv());
      }
    }
  }

  /**
   * alloc-shared: free extents, reservations and ownership records must cover the data area
   * exactly once, except that a reservation may still cover blocks its commit made owned.
   */
  private void freeMap() {
    if (m.freeMapVersion == null) {
      return; // not made yet: the first node to use it makes it from blocks/
    }
    List<Run> runs = new ArrayList<>();
    m.free.forEach(f -> runs.add(new Run(f.start(), f.start() + f.length(), -1, "free")));
    List<Run> owned = new ArrayList<>();
    m.owners.values().forEach(o -> owned.add(new Run(o.owner().start(), o.owner().end(),
        o.owner().inode(), "owned")));
    owned.addAll(refs);
    List<Run> res = new ArrayList<>();
    m.reserved.forEach(r -> res.add(new Run(r.start(), r.start() + r.length(), -1, "reserved")));
    List<String> problems = new ArrayList<>();
    for (Run f : runs) {
      if (f.start() < m.firstBlock() || f.end() > m.endBlock()) {
        problem(problems, "freemap-outside", f, "free extent " + span(f)
            + " lies outside the data area");
      }
      for (List<Run> others : List.of(runs, owned, res)) {
        for (Run o : others) {
          if (o != f && o.start() < f.end() && f.start() < o.end()) {
            problem(problems, "freemap-overlap", f, "free extent " + span(f) + " overlaps "
                + o.what() + " blocks " + span(o) + (o.ino() > 0 ? " of inode " + o.ino() : ""));
            break;
          }
        }
      }
    }
    List<Run> all = new ArrayList<>(runs);
    all.addAll(owned);
    all.addAll(res);
    all.sort(Comparator.comparingLong(Run::start));
    long at = m.firstBlock();
    long leaked = 0;
    for (Run r : all) {
      if (r.start() > at) {
        leaked += r.start() - at;
      }
      at = Math.max(at, r.end());
    }
    leaked += Math.max(0, m.endBlock() - at);
    if (leaked > 0) {
      problem(problems, "freemap-leak", null, leaked
          + " data blocks are neither free, reserved nor owned");
    }
    if (!problems.isEmpty()) {
      fixes.dropFreeMap = String.join("; ", problems);
    }
  }

  private void problem(List<String> problems, String kind, Run r, String what) {
    out.add(Finding.of(kind, r == null ? "freemap" : "freemap block " + r.start(), what
        + " (repair: drop the free map; the next node remakes it from blocks/)"));
    problems.add(kind);
  }

  /** The number of distinct blocks the runs cover. */
  static long union(List<Run> sorted) {
    long n = 0;
    long at = Long.MIN_VALUE;
    for (Run r : sorted) {
      long s = Math.max(at, r.start());
      if (r.end() > s) {
        n += r.end() - s;
      }
      at = Math.max(at, r.end());
    }
    return n;
  }

  static String span(Run r) {
    return r.start() + "-" + (r.end() - 1);
  }
}

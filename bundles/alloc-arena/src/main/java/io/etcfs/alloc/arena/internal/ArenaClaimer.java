package io.etcfs.alloc.arena.internal;

import io.etcfs.alloc.arena.internal.BlocksMirror.Snapshot;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.MetaStoreException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * Which arenas this node holds: claiming one more when its own are full, adopting its own
 * incarnation's claims on activation, and letting go of arenas nobody uses. A claim or an adoption
 * rebuilds the arena from a fresh read of its reverse map — everything not referenced there is
 * free, because reservations never survive their node.
 */
final class ArenaClaimer implements ArenaTable.Claimer {
  private static final Logger LOG = System.getLogger(ArenaClaimer.class.getName());

  private final ArenaTable table;
  private final Claims claims;
  private final BlocksMirror mirror;
  private final int spread;

  ArenaClaimer(ArenaTable table, Claims claims, BlocksMirror mirror, String nodeName) {
    this.table = table;
    this.claims = claims;
    this.mirror = mirror;
    this.spread = Math.floorMod(nodeName.hashCode(), Math.max(1, table.arenaCount()));
  }

  /** Called under the table lock by an allocation that ran out of owned space. */
  @Override
  public Arena claim() {
    for (Arena a : candidates(claims.read())) {
      OptionalLong revision = claims.claim(a.index);
      if (revision.isEmpty()) {
        continue;
      }
      Snapshot s = mirror.read(a.index);
      table.own(a, revision.getAsLong(), s.refs(), s.revision());
      LOG.log(Level.INFO, "claimed arena {0} ({1} of {2} blocks free)", a.index, a.free(),
          table.geometry.blocksPerArena());
      if (a.free() > 0) {
        return a;
      }
      release(a);
    }
    return null;
  }

  /** True if an unclaimed arena seems to have free blocks (one read of the claims). */
  boolean claimable() {
    Map<Integer, KeyValue> claimed = claims.read();
    return table.locked(() -> !candidates(claimed).isEmpty());
  }

  /**
   * Unclaimed arenas that seem to have free blocks, the emptiest first; among equals each node
   * starts at its own offset, so that nodes claiming at once mostly try different arenas.
   */
  private List<Arena> candidates(Map<Integer, KeyValue> claimed) {
    List<Arena> list = new ArrayList<>();
    long perArena = table.geometry.blocksPerArena();
    for (int i = 0; i < table.arenaCount(); i++) {
      Arena a = table.arena(i);
      if (!claimed.containsKey(i) && !a.owned() && a.referenced() < perArena) {
        list.add(a);
      }
    }
    int n = table.arenaCount();
    list.sort(Comparator.comparingLong(Arena::referenced)
        .thenComparingInt(a -> Math.floorMod(a.index - spread, n)));
    return list;
  }

  /** On activation: takes back the claims this same incarnation left (a bundle restart). */
  void adopt() {
    table.locked(() -> claims.read().forEach((index, kv) -> {
      if (index < table.arenaCount() && claims.mine(kv)) {
        Snapshot s = mirror.read(index);
        table.own(table.arena(index), kv.createRevision(), s.refs(), s.revision());
        LOG.log(Level.INFO, "took back arena {0} claimed by this incarnation", index);
      }
    }));
  }

  /**
   * Releases owned arenas with nothing referenced or reserved for {@code idleNanos}. Blocks still
   * landing (committed, not yet shown by the watch) are data too: without them in the test, an
   * arena whose only extents were just committed would look empty and be let go.
   */
  void releaseIdle(long idleNanos) {
    for (Arena a : table.owned()) {
      table.freeing(() -> {
        boolean idle = table.now() - a.lastActivity >= idleNanos;
        if (idle && a.referenced() == 0 && a.landing() == 0 && table.spare(a)) {
          release(a);
        }
      });
    }
  }

  /**
   * Another node ran out of space: lets go of every arena with free blocks that this node can
   * spare ({@link ArenaTable#spare}), data or not. What it committed there stays in the reverse
   * map, so the claimer rebuilds the arena with exactly the blocks nobody references; nothing
   * reserved is in flight there (spare), so no write of this node can land in a block the
   * claimer hands out. A full arena is kept: it has nothing to give.
   *
   * @return the arenas released
   */
  int releaseSpare() {
    int released = 0;
    for (Arena a : table.owned()) {
      released += table.freeing(() -> {
        if (a.free() > 0 && table.spare(a) && release(a)) {
          return 1;
        }
        return 0;
      });
    }
    return released;
  }

  /**
   * The clean leave: every arena without reservations is released, data or not — the reverse
   * map says which blocks are in use, so whoever claims it next rebuilds it. An arena with
   * blocks still reserved keeps its claim: a write to them may still be in flight, so the arena
   * must wait for recovery's grace period (issue #5) rather than go to another node now.
   */
  void releaseAll() {
    for (Arena a : table.owned()) {
      table.freeing(() -> {
        if (a.reserved() == 0) {
          release(a);
        } else {
          LOG.log(Level.WARNING, "kept the claim on arena {0}: {1} blocks are still reserved",
              a.index, a.reserved());
        }
      });
    }
  }

  private boolean release(Arena a) {
    try {
      boolean released = claims.release(a.index, a.claimRevision());
      table.disown(a);
      LOG.log(Level.INFO, released ? "released arena {0}"
          : "arena {0} was no longer this node's claim", a.index);
      return true;
    } catch (MetaStoreException e) {
      LOG.log(Level.WARNING, "could not release arena {0} (kept it): {1}", a.index,
          e.getMessage());
      return false;
    }
  }
}

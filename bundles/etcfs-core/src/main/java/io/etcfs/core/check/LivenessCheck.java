package io.etcfs.core.check;

import io.etcfs.core.fs.meta.FsKeys;
import io.etcfs.spi.meta.KeyValue;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Keys held by an incarnation of a node: heartbeat slots, orphans, arena claims, inode and file
 * locks, free-map reservations and promises. An incarnation is live while {@code members/<node>}
 * exists with its generation as create revision. A dead incarnation whose slot is still held has
 * its recovery to come (or running: {@code recovery/<slot>}), which releases its arenas, purges
 * its orphans and frees its reservations: that is reported as pending, not as a fault. What a dead
 * incarnation holds with no slot left is never recovered by anyone: a fault.
 */
final class LivenessCheck {
  private final Model m;
  private final Fixes fixes;
  private final List<Finding> out;
  private final FsKeys keys;

  LivenessCheck(Model m, Fixes fixes, List<Finding> out) {
    this.m = m;
    this.fixes = fixes;
    this.out = out;
    this.keys = new FsKeys(m.space.name());
  }

  void run() {
    slots();
    orphans();
    arenas();
    locks();
    freeMap();
  }

  private void slots() {
    for (Map.Entry<Integer, Model.Held> e : m.slots.entrySet()) {
      Model.Held h = e.getValue();
      if (m.live(h.node(), h.generation())) {
        continue;
      }
      KeyValue rec = m.recoveries.get(e.getKey());
      out.add(Finding.pending(rec != null ? "recovery-running" : "recovery-due",
          h.kv().keyString(), "incarnation " + h.generation() + " of " + h.node() + " is dead; "
              + (rec != null ? "its recovery is running"
                  : "the next node that mounts recovers it (releases its arenas, purges its"
                      + " orphans)")));
    }
  }

  /** Pending if the incarnation's recovery is to come, else a fault; null if it is live. */
  private Boolean deadFault(Model.Held h) {
    if (m.live(h.node(), h.generation())) {
      return null;
    }
    return m.slotOf(h.node(), h.generation()) == null;
  }

  private void orphans() {
    for (Map.Entry<Long, Model.Held> e : m.orphans.entrySet()) {
      long ino = e.getKey();
      Model.Held h = e.getValue();
      String key = h.kv().keyString();
      if (!m.inodes.containsKey(ino)) {
        out.add(Finding.of("orphan-no-inode", key, "orphan record of inode " + ino
            + ", which does not exist (repair: delete it)"));
        fixes.delete("deleted orphan record of missing inode " + ino, h.kv());
        continue;
      }
      Boolean fault = deadFault(h);
      if (fault == null) {
        continue;
      }
      if (!fault) {
        out.add(Finding.pending("orphan-recovery-due", key, "inode " + ino + " held open by"
            + " dead incarnation " + h.generation() + " of " + h.node()
            + ": its recovery purges it"));
        continue;
      }
      out.add(Finding.of("orphan-dead", key, "inode " + ino + " was held open by incarnation "
          + h.generation() + " of " + h.node() + ", which is dead and will never be recovered"
          + " (repair: purge the inode)"));
      // a large file's keys do not fit one transaction: its extents and records go first, the
      // inode and its orphan record last, so a purge cut short is found again (orphan-dead)
      List<KeyValue> parts = new ArrayList<>();
      m.chunks.getOrDefault(ino, List.of()).forEach(c -> parts.add(c.kv()));
      parts.addAll(m.xattrs.getOrDefault(ino, List.of()));
      m.owners.values().stream().filter(o -> o.owner().inode() == ino)
          .forEach(o -> parts.add(o.kv()));
      if (!parts.isEmpty()) {
        fixes.delete("purging orphan inode " + ino + ": deleted its extents, xattrs and"
            + " ownership records", parts);
      }
      List<KeyValue> last = new ArrayList<>(List.of(m.inodeKvs.get(ino), h.kv()));
      if (m.fences.containsKey(ino)) {
        last.add(m.fences.get(ino));
      }
      fixes.delete("purged orphan inode " + ino + " of dead " + h.node(), last);
      fixes.purged.add(ino);
      fixes.freesBlocks = true;
    }
  }

  private void arenas() {
    for (Map.Entry<Long, Model.Held> e : m.arenas.entrySet()) {
      Model.Held h = e.getValue();
      Boolean fault = deadFault(h);
      if (fault == null || e.getKey() >= m.record.arenas()) {
        continue;
      }
      if (!fault) {
        out.add(Finding.pending("arena-recovery-due", h.kv().keyString(), "claimed by dead"
            + " incarnation " + h.generation() + " of " + h.node() + ": its recovery releases it"));
      } else {
        out.add(Finding.of("arena-dead", h.kv().keyString(), "claimed by incarnation "
            + h.generation() + " of " + h.node() + ", which is dead and will never be recovered"
            + " (repair: delete the claim; its blocks are rebuilt from blocks/ by the next claim)"));
        fixes.delete("deleted claim of arena " + e.getKey() + " by dead " + h.node(), h.kv());
      }
    }
  }

  /**
   * Lock keys live under their node's lock-session or POSIX-lock lease and go with it. One of a
   * node that is no member, under a lease, is on its way out (etcd deletes it within the TTL);
   * one with no lease never goes and blocks the inode for good.
   */
  private void locks() {
    for (Model.LockKey l : m.locks) {
      KeyValue kv = l.kv();
      if (m.members.containsKey(l.node())) {
        continue;
      }
      if (kv.lease() != 0) {
        out.add(Finding.pending(l.kind() + "-expiring", kv.keyString(), "held by " + l.node()
            + ", no member: goes with its lease " + Long.toHexString(kv.lease())));
      } else {
        out.add(Finding.of(l.kind() + "-dead", kv.keyString(), "held by " + l.node()
            + ", which is no member, under no lease: it never goes (repair: delete it)"));
        fixes.delete("deleted " + l.kind() + " key " + kv.keyString() + " of " + l.node(), kv);
      }
    }
  }

  private void freeMap() {
    List<Model.Held> held = new ArrayList<>();
    m.reserved.forEach(r -> held.add(new Model.Held(r.kv(), r.node(), r.generation())));
    held.addAll(m.promises.values());
    for (Model.Held h : held) {
      Boolean fault = deadFault(h);
      if (fault == null) {
        continue;
      }
      boolean reservation = h.kv().keyString().contains("/freemap/r/");
      String kind = reservation ? "freemap-reservation" : "freemap-promise";
      if (!fault) {
        out.add(Finding.pending(kind + "-recovery-due", h.kv().keyString(), "of dead"
            + " incarnation " + h.generation() + " of " + h.node() + ": its recovery frees it"));
      } else {
        out.add(Finding.of(kind + "-dead", h.kv().keyString(), "of incarnation "
            + h.generation() + " of " + h.node() + ", which is dead and will never be recovered"
            + " (repair: drop the free map; the next node remakes it from blocks/)"));
        fixes.dropFreeMap = kind + "-dead";
      }
    }
  }
}

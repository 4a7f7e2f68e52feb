package io.etcfs.core.check;

import io.etcfs.core.fs.meta.Codec;
import io.etcfs.core.fs.meta.FsKeys;
import io.etcfs.core.fs.meta.Inode;
import io.etcfs.core.fs.meta.NameHash;
import io.etcfs.spi.fs.Keyspace;
import io.etcfs.spi.meta.Compare;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.Txn;
import io.etcfs.spi.meta.TxnResult;
import io.etcfs.spi.vfs.Attr;
import io.etcfs.spi.vfs.Vfs;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * Applies the fixes a check found that need no guess, with every node stopped: deletes what no
 * one can use (entries of missing inodes, keys of missing inodes, what dead incarnations that
 * will never be recovered left), sets link counts, parents and block counts from the entries and
 * extent maps, links unreachable inodes into {@code lost+found} (made at the root if missing)
 * under their inode numbers, rebuilds ownership records from the extent maps, and for alloc-shared
 * drops the free map so that the next node remakes it from the records.
 *
 * <p>Each change is one transaction that compares every key it touches with the snapshot (or
 * with what this repair itself wrote), and a guard against a node joining meanwhile: a join puts
 * {@code members/<node>} and the lowest free {@code slots/<k>} in one transaction
 * (NodeMembership.freeSlot), so every repair transaction compares that slot key absent (a slot
 * is freed only by a live node's recovery, after a join), and the member keys of up to 24 node
 * names the filesystem knows absent. A transaction that fails
 * its compares stops the repair: what was done so far stays done, and is reported.
 */
public final class FsRepair {
  /** Changes per transaction: well under etcd's 128 operations with the guards. */
  static final int BATCH = 64;

  /** Repair refused or stopped; the message is one line. */
  public static final class RepairException extends Exception {
    private static final long serialVersionUID = 1L;

    public RepairException(String message) {
      super(message);
    }
  }

  private final MetaStore store;
  private final Model m;
  private final Fixes fixes;
  private final FsKeys keys;
  private final Consumer<String> log;
  private final Map<String, Long> written = new HashMap<>();
  private final List<Compare> guards = new ArrayList<>();

  private FsRepair(MetaStore store, FsChecker.Result result, Consumer<String> log) {
    this.store = store;
    this.m = result.model;
    this.fixes = result.fixes;
    this.keys = new FsKeys(m.space.name());
    this.log = log;
  }

  /**
   * Repairs what {@code result} found, telling {@code log} each change as it commits.
   *
   * @return how many changes were committed
   * @throws RepairException if the filesystem has live members (named), or a change found its
   *     keys changed since the check (nothing more is changed then)
   */
  public static int repair(MetaStore store, FsChecker.Result result, Consumer<String> log)
      throws RepairException {
    return new FsRepair(store, result, log).run();
  }

  private int run() throws RepairException {
    refuseLive(m.members.keySet());
    refuseLive(liveNow());
    guards();
    int done = 0;
    List<Fixes.Group> groups = new ArrayList<>(fixes.groups);
    Long lostFound = lostAndFound(groups);
    for (Fixes.Group g : groups) {
      done += commit(g.description(), g.changes());
    }
    // a lost+found made here carries the root's rewrite (its link count) in its own group
    boolean rootDone = lostFound != null && findLostFound() == null;
    for (Map.Entry<Long, Inode> e : fixes.inodes.entrySet()) {
      if (!fixes.purged.contains(e.getKey()) && !fixes.lostAndFound.contains(e.getKey())
          && !(rootDone && e.getKey() == Vfs.ROOT)) {
        done += commit("set inode " + e.getKey() + ": "
            + String.join(", ", fixes.inodeWhy.get(e.getKey())), List.of(inodePut(e.getValue())));
      }
    }
    if (lostFound != null) {
      done += link(lostFound);
    }
    List<Fixes.Change> own = Fixes.collapse(fixes.ownership);
    for (int i = 0; i < own.size(); i += BATCH) {
      List<Fixes.Change> batch = own.subList(i, Math.min(own.size(), i + BATCH));
      done += commit("rebuilt " + batch.size() + " block ownership record(s) from the extent"
          + " maps", batch);
    }
    done += freeMap(!own.isEmpty());
    return done;
  }

  private void refuseLive(java.util.Collection<String> members) throws RepairException {
    if (!members.isEmpty()) {
      throw new RepairException("filesystem '" + m.space.name() + "' has live members ("
          + String.join(", ", members) + "): unmount them all before --repair; nothing was"
          + " changed");
    }
  }

  private List<String> liveNow() {
    byte[] prefix = keys.membersPrefix();
    String p = new String(prefix, StandardCharsets.UTF_8);
    return store.prefix(prefix, 0).kvs().stream()
        .map(kv -> kv.keyString().substring(p.length())).toList();
  }

  /** The compares that fail once a node joins (class comment). */
  private void guards() {
    int free = 0;
    while (m.slots.containsKey(free)) {
      free++;
    }
    guards.add(Compare.absent(m.space.bytes(Keyspace.SLOTS + Keyspace.hex(free, 2))));
    TreeSet<String> names = new TreeSet<>();
    m.slots.values().forEach(h -> names.add(h.node()));
    m.arenas.values().forEach(h -> names.add(h.node()));
    m.orphans.values().forEach(h -> names.add(h.node()));
    names.stream().limit(24).forEach(n -> guards.add(Compare.absent(keys.member(n))));
  }

  private int commit(String what, List<Fixes.Change> changes) throws RepairException {
    Txn txn = new Txn();
    guards.forEach(txn::when);
    for (Fixes.Change c : Fixes.collapse(changes)) {
      String k = new String(c.key(), StandardCharsets.UTF_8);
      txn.when(Compare.modRevision(c.key(), written.getOrDefault(k, c.modRevision())));
      txn.then(c.value() == null ? Op.delete(c.key()) : Op.put(c.key(), c.value()));
    }
    TxnResult r = store.commit(txn);
    if (!r.succeeded()) {
      throw new RepairException("stopped before '" + what + "': its keys changed since the"
          + " check, or a node joined; nothing more was changed (run fsck again)");
    }
    for (Fixes.Change c : changes) {
      written.put(new String(c.key(), StandardCharsets.UTF_8), c.value() == null ? 0
          : r.revision());
    }
    log.accept(what);
    return 1;
  }

  private Fixes.Change inodePut(Inode i) {
    KeyValue kv = m.inodeKvs.get(i.ino());
    return new Fixes.Change(keys.inode(i.ino()), Codec.inode(i), kv == null ? 0
        : kv.modRevision());
  }

  private Long findLostFound() {
    for (Model.Entry e : m.entries) {
      Inode child = m.inodes.get(e.dirent().ino());
      if (e.dir() == Vfs.ROOT && e.name().equals("lost+found") && child != null && child.isDir()) {
        return child.ino();
      }
    }
    return null;
  }

  /**
   * Makes lost+found if unreachable inodes need it and it is missing: one group with its
   * inode, its entry, the root's link count and the inode counter (whose own fix it replaces).
   */
  private Long lostAndFound(List<Fixes.Group> groups) {
    if (fixes.lostAndFound.isEmpty()) {
      return null;
    }
    Long found = findLostFound();
    if (found != null) {
      return found;
    }
    String next = new String(keys.inoNext(), StandardCharsets.UTF_8);
    groups.removeIf(g -> g.changes().stream().anyMatch(c ->
        new String(c.key(), StandardCharsets.UTF_8).equals(next)));
    long counter = -1;
    try {
      counter = m.inoNext == null ? -1 : Long.parseLong(m.inoNext.valueString().trim());
    } catch (NumberFormatException e) {
      counter = -1;
    }
    long ino = Math.max(counter, (m.inodes.isEmpty() ? 1 : m.inodes.lastKey()) + 1);
    long now = System.currentTimeMillis() * 1_000_000L;
    Inode dir = new Inode(ino, Attr.S_IFDIR | 0700, 0, 0, 2, 0, 0, 0, Vfs.ROOT, now, now, now,
        null);
    Inode root = fixes.inodes.getOrDefault(Vfs.ROOT, m.inodes.get(Vfs.ROOT));
    List<Fixes.Change> c = new ArrayList<>();
    c.add(new Fixes.Change(keys.inode(ino), Codec.inode(dir), 0));
    c.add(new Fixes.Change(keys.dirent(Vfs.ROOT, NameHash.of("lost+found"), "lost+found"),
        Codec.dirent(new Codec.Dirent(ino, dir.type())), 0));
    c.add(inodePut(root.withNlink(root.nlink() + 1)));
    c.add(new Fixes.Change(keys.inoNext(), Long.toString(ino + 1).getBytes(StandardCharsets.UTF_8),
        m.inoNext == null ? 0 : m.inoNext.modRevision()));
    groups.add(0, new Fixes.Group("made /lost+found (inode " + ino + ")", c));
    m.inodes.put(ino, dir);
    return ino;
  }

  /** Links each unreachable inode into lost+found under its number, in batches. */
  private int link(long lf) throws RepairException {
    int done = 0;
    List<Long> tops = new ArrayList<>(fixes.lostAndFound);
    Inode dir = fixes.inodes.getOrDefault(lf, m.inodes.get(lf));
    for (int i = 0; i < tops.size(); i += BATCH / 2) {
      List<Long> batch = tops.subList(i, Math.min(tops.size(), i + BATCH / 2));
      List<Fixes.Change> c = new ArrayList<>();
      int subdirs = 0;
      for (long ino : batch) {
        Inode base = fixes.inodes.getOrDefault(ino, m.inodes.get(ino));
        Inode fixed = base.isDir()
            ? base.withParent(lf).withNlink(2 + subdirsOf(ino)) : base.withNlink(1);
        subdirs += base.isDir() ? 1 : 0;
        String name = Long.toString(ino);
        c.add(new Fixes.Change(keys.dirent(lf, NameHash.of(name), name),
            Codec.dirent(new Codec.Dirent(ino, base.type())), 0));
        c.add(inodePut(fixed));
      }
      dir = dir.withNlink(dir.nlink() + subdirs);
      c.add(inodePut(dir));
      done += commit("linked " + batch.size() + " unreachable inode(s) into lost+found: "
          + batch, c);
    }
    return done;
  }

  private int subdirsOf(long ino) {
    int n = 0;
    for (Model.Entry e : m.entries) {
      Inode child = m.inodes.get(e.dirent().ino());
      if (e.dir() == ino && child != null && child.isDir()) {
        n++;
      }
    }
    return n;
  }

  /**
   * alloc-shared: drops the free map when it is wrong, or when this repair freed or re-owned
   * blocks (the map would not know); the next node makes it again from blocks/.
   */
  private int freeMap(boolean reowned) throws RepairException {
    boolean freed = reowned || fixes.freesBlocks;
    if (!m.record.allocBackend().equals("shared") || m.freeMapAll.isEmpty()
        || (fixes.dropFreeMap == null && !freed)) {
      return 0;
    }
    byte[] prefix = m.space.bytes(Keyspace.FREE_MAP);
    Txn txn = new Txn();
    guards.forEach(txn::when);
    if (m.freeMapVersion != null) {
      txn.when(Compare.modRevision(m.freeMapVersion.key(), m.freeMapVersion.modRevision()));
    }
    txn.then(new Op.Delete(prefix, Keys.prefixEnd(prefix)));
    if (!store.commit(txn).succeeded()) {
      throw new RepairException("stopped before dropping the free map: it changed since the"
          + " check, or a node joined (run fsck again)");
    }
    log.accept("dropped the free map (" + (fixes.dropFreeMap != null ? fixes.dropFreeMap
        : "blocks were freed or re-owned") + "): the next node remakes it from blocks/");
    return 1;
  }
}

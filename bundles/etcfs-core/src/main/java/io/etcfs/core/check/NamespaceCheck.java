package io.etcfs.core.check;

import io.etcfs.core.fs.meta.Codec;
import io.etcfs.core.fs.meta.FileExtent;
import io.etcfs.core.fs.meta.FsKeys;
import io.etcfs.core.fs.meta.Inode;
import io.etcfs.core.fs.meta.NameHash;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.vfs.Vfs;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Entries, inodes and link counts: every entry names an inode that exists, in a directory that
 * exists; a file's link count is its number of entries, a directory's 2 + its subdirectories (as
 * the core counts them: mkdir raises the parent's count, rmdir lowers it); every inode is
 * reachable from the root, or an orphan (unlinked while open, {@code orphans/<ino>}).
 */
final class NamespaceCheck {
  private final Model m;
  private final Fixes fixes;
  private final List<Finding> out;
  private final FsKeys keys;
  private final Map<Long, Integer> links = new HashMap<>();
  private final Map<Long, Integer> subdirs = new HashMap<>();
  private final Map<Long, Long> parentOf = new HashMap<>();
  private final Map<Long, List<Long>> children = new HashMap<>();

  NamespaceCheck(Model m, Fixes fixes, List<Finding> out) {
    this.m = m;
    this.fixes = fixes;
    this.out = out;
    this.keys = new FsKeys(m.space.name());
  }

  void run() {
    if (!m.inodes.containsKey(Vfs.ROOT) || !m.inodes.get(Vfs.ROOT).isDir()) {
      out.add(Finding.of("root-missing", "inode 1",
          "the root directory's inode is missing or not a directory (not repaired)"));
    }
    m.entries.forEach(this::entry);
    Set<Long> reachable = walk(List.of(Vfs.ROOT));
    List<Long> tops = new ArrayList<>();
    for (Inode i : m.inodes.values()) {
      if (!reachable.contains(i.ino()) && !m.orphans.containsKey(i.ino())
          && links.getOrDefault(i.ino(), 0) == 0) {
        tops.add(i.ino());
      }
    }
    Set<Long> placed = walk(tops);
    for (Inode i : m.inodes.values()) {
      long ino = i.ino();
      if (tops.contains(ino)) {
        out.add(Finding.of("unreachable", "inode " + ino, describe(i)
            + " with no entry and no orphan record (repair: link it into lost+found as " + ino
            + ")"));
        fixes.lostAndFound.add(ino);
      } else if (!reachable.contains(ino) && !placed.contains(ino)
          && !m.orphans.containsKey(ino)) {
        out.add(Finding.of("unreachable-cycle", "inode " + ino, describe(i)
            + " is reachable only through a directory cycle (not repaired)"));
      }
      linkCount(i, tops.contains(ino));
      blockCount(i);
    }
    inoNext();
    deadKeys();
  }

  private void entry(Model.Entry e) {
    String key = e.kv().keyString();
    Inode dir = m.inodes.get(e.dir());
    Inode child = m.inodes.get(e.dirent().ino());
    if (dir == null || !dir.isDir()) {
      out.add(Finding.of("dirent-no-dir", key, "directory " + e.dir() + (dir == null
          ? " does not exist" : " is not a directory") + " (repair: delete the entry)"));
      fixes.delete("deleted entry " + key + " of a missing directory", e.kv());
      return;
    }
    if (child == null) {
      out.add(Finding.of("dirent-dangling", key, "names inode " + e.dirent().ino()
          + ", which does not exist (repair: delete the entry)"));
      fixes.delete("deleted entry " + key + " of missing inode " + e.dirent().ino(), e.kv());
      return;
    }
    long hash = NameHash.of(e.name());
    if (!key.equals(new String(keys.dirent(e.dir(), hash, e.name()), StandardCharsets.UTF_8))
        || e.dirent().type() != child.type()) {
      out.add(Finding.of("dirent-key", key, "the entry's hash or file type does not match its"
          + " name and inode " + child.ino() + " (repair: rewrite the entry)"));
      fixes.group("rewrote entry " + key, List.of(
          new Fixes.Change(e.kv().key(), null, e.kv().modRevision()),
          new Fixes.Change(keys.dirent(e.dir(), hash, e.name()),
              Codec.dirent(new Codec.Dirent(child.ino(), child.type())), 0)));
    }
    links.merge(child.ino(), 1, Integer::sum);
    if (child.isDir()) {
      subdirs.merge(e.dir(), 1, Integer::sum);
      parentOf.put(child.ino(), e.dir());
    }
    children.computeIfAbsent(e.dir(), k -> new ArrayList<>()).add(child.ino());
  }

  private Set<Long> walk(List<Long> from) {
    Set<Long> seen = new HashSet<>();
    Deque<Long> todo = new ArrayDeque<>(from);
    while (!todo.isEmpty()) {
      long ino = todo.pop();
      if (m.inodes.containsKey(ino) && seen.add(ino)) {
        todo.addAll(children.getOrDefault(ino, List.of()));
      }
    }
    return seen;
  }

  private void linkCount(Inode i, boolean top) {
    long ino = i.ino();
    int named = links.getOrDefault(ino, 0);
    if (i.isDir() && named > (ino == Vfs.ROOT ? 0 : 1)) {
      out.add(Finding.of("dir-multilinked", "inode " + ino,
          "directory has " + named + " entries (not repaired)"));
    }
    if (top) {
      return; // lost+found sets its link count and parent
    }
    int expected = i.isDir() ? 2 + subdirs.getOrDefault(ino, 0) : named;
    if (i.nlink() != expected) {
      out.add(Finding.of("nlink", "inode " + ino, describe(i) + " has link count " + i.nlink()
          + ", its entries make " + expected + " (repair: set it)"));
      fixes.inode(i, i.withNlink(expected), "link count " + i.nlink() + " -> " + expected);
    }
    Long parent = ino == Vfs.ROOT ? Long.valueOf(Vfs.ROOT) : parentOf.get(ino);
    if (i.isDir() && parent != null && i.parent() != parent) {
      out.add(Finding.of("dir-parent", "inode " + ino, "directory's parent is " + i.parent()
          + ", its entry is in " + parent + " (repair: set it)"));
      fixes.inode(i, i.withParent(parent), "parent " + i.parent() + " -> " + parent);
    }
  }

  private void blockCount(Inode i) {
    long blocks = 0;
    for (Model.Chunk c : m.chunks.getOrDefault(i.ino(), List.of())) {
      blocks += c.extents().stream().mapToLong(FileExtent::length).sum();
    }
    if (blocks != i.blocks()) {
      out.add(Finding.of("inode-blocks", "inode " + i.ino(), "records " + i.blocks()
          + " blocks, its extent map references " + blocks + " (repair: set it)"));
      fixes.inode(i, i.withSize(i.size(), blocks), "blocks " + i.blocks() + " -> " + blocks);
    }
  }

  private void inoNext() {
    long max = m.inodes.isEmpty() ? 1 : m.inodes.lastKey();
    long next = -1;
    try {
      next = m.inoNext == null ? -1 : Long.parseLong(m.inoNext.valueString().trim());
    } catch (NumberFormatException e) {
      next = -1;
    }
    if (next <= max) {
      out.add(Finding.of("ino-next", "ino/next", (next < 0 ? "missing or not a number"
          : "is " + next) + ", but inode " + max + " exists (repair: set it to " + (max + 1)
          + ")"));
      fixes.group("set ino/next to " + (max + 1), List.of(new Fixes.Change(keys.inoNext(),
          Long.toString(max + 1).getBytes(StandardCharsets.UTF_8),
          m.inoNext == null ? 0 : m.inoNext.modRevision())));
    }
  }

  /** Keys of an inode that does not exist: extent chunks, xattrs, fences, directory times. */
  private void deadKeys() {
    m.chunks.forEach((ino, list) -> {
      if (dead("extent-no-inode", ino, list.stream().map(Model.Chunk::kv).toList())) {
        fixes.freesBlocks = true;
      }
    });
    m.xattrs.forEach((ino, list) -> dead("xattr-no-inode", ino, list));
    m.fences.forEach((ino, kv) -> dead("fence-no-inode", ino, List.of(kv)));
    m.dirTimes.forEach((ino, kv) -> dead("times-no-inode", ino, List.of(kv)));
  }

  /** Reports and deletes the keys of {@code ino} if it does not exist; whether it did not. */
  private boolean dead(String kind, long ino, List<KeyValue> kvs) {
    if (m.inodes.containsKey(ino)) {
      return false;
    }
    out.add(Finding.of(kind, "inode " + ino, kvs.size() + " key(s) of an inode that does not"
        + " exist (repair: delete them)"));
    fixes.delete("deleted " + kvs.size() + " " + kind.substring(0, kind.indexOf('-'))
        + " key(s) of missing inode " + ino, kvs);
    return true;
  }

  static String describe(Inode i) {
    return (i.isDir() ? "directory" : i.isRegular() ? "file" : "inode") + " " + i.ino();
  }
}

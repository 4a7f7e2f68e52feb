package io.etcfs.core.check;

import io.etcfs.core.fs.meta.Inode;
import io.etcfs.spi.meta.KeyValue;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What the checks would change, collected while they run and turned into transactions by {@link
 * FsRepair}. Inode rewrites are merged (a link count and a block count of one inode make one
 * put); everything else is a group of key changes that must apply together.
 */
final class Fixes {
  /** A delete ({@code value == null}) or put of one key, guarded by the key's snapshot state. */
  record Change(byte[] key, byte[] value, long modRevision) {}

  /** Changes that apply together, and what they do in words. */
  record Group(String description, List<Change> changes) {}

  final Map<Long, Inode> inodes = new TreeMap<>();
  final Map<Long, List<String>> inodeWhy = new TreeMap<>();
  final List<Group> groups = new ArrayList<>();
  /** Unreachable inodes to link into lost+found, in inode order. */
  final TreeSet<Long> lostAndFound = new TreeSet<>();
  /** Ownership records to delete and to put: one rebuild, applied in batches. */
  final List<Change> ownership = new ArrayList<>();
  /** Inodes an orphan purge deletes: no other fix may write them. */
  final java.util.Set<Long> purged = new java.util.HashSet<>();
  /** Whether a fix frees blocks (deletes extents or their records). */
  boolean freesBlocks;
  /** Whether the shared allocator's free map is to be dropped (remade by the next node). */
  String dropFreeMap;

  void inode(Inode current, Inode fixed, String why) {
    inodes.merge(current.ino(), fixed, (a, b) -> merge(current, a, b));
    inodeWhy.computeIfAbsent(current.ino(), k -> new ArrayList<>()).add(why);
  }

  /** Both rewrites of one inode: each field from whichever changed it. */
  private static Inode merge(Inode c, Inode a, Inode b) {
    return new Inode(c.ino(), c.mode(), c.uid(), c.gid(),
        b.nlink() != c.nlink() ? b.nlink() : a.nlink(), b.size() != c.size() ? b.size() : a.size(),
        c.rdev(), b.blocks() != c.blocks() ? b.blocks() : a.blocks(),
        b.parent() != c.parent() ? b.parent() : a.parent(), c.atimeNs(), c.mtimeNs(), c.ctimeNs(),
        c.target());
  }

  void delete(String why, KeyValue... kvs) {
    delete(why, List.of(kvs));
  }

  /** Deletes that need not apply together: in groups of at most {@link FsRepair#BATCH}. */
  void delete(String why, List<KeyValue> kvs) {
    for (int i = 0; i < kvs.size(); i += FsRepair.BATCH) {
      List<Change> c = new ArrayList<>();
      kvs.subList(i, Math.min(kvs.size(), i + FsRepair.BATCH))
          .forEach(kv -> c.add(new Change(kv.key(), null, kv.modRevision())));
      groups.add(new Group(kvs.size() <= FsRepair.BATCH ? why
          : why + " (" + (i + c.size()) + " of " + kvs.size() + ")", c));
    }
  }

  void group(String why, List<Change> changes) {
    groups.add(new Group(why, changes));
  }

  /** Groups as they are to be applied: changes of one key within a group collapse to the last. */
  static List<Change> collapse(List<Change> changes) {
    Map<String, Change> byKey = new LinkedHashMap<>();
    for (Change c : changes) {
      String k = new String(c.key(), java.nio.charset.StandardCharsets.UTF_8);
      Change before = byKey.get(k);
      byKey.put(k, before == null ? c : new Change(c.key(), c.value(), before.modRevision()));
    }
    return new ArrayList<>(byKey.values());
  }
}

package io.etcfs.alloc.arena.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeSet;

/**
 * What releasing some blocks does to an arena's reverse map. A released range may cover a
 * recorded extent exactly, cut a piece out of it (overwrite in the middle of a file), or span
 * several (truncate): every recorded extent it touches is deleted, and what remains of it is put
 * back as pieces with the same inode. A piece that starts where the old key did overwrites that
 * key rather than deleting it, since etcd rejects a put and a delete of one key in one txn.
 */
final class ReleasePlan {
  private ReleasePlan() {}

  /**
   * @param ino the inode releasing, checked against every touched entry (-1: do not check)
   * @throws IllegalStateException if a released block belongs to another inode
   */
  static List<RefChange> plan(NavigableMap<Long, Ref> refs, RunSet released, long ino) {
    List<RefChange> changes = new ArrayList<>();
    for (long key : touched(refs, released)) {
      Ref ref = refs.get(key);
      if (ino >= 0 && ref.ino() != ino) {
        throw new IllegalStateException("inode " + Long.toHexString(ino) + " releases block "
            + key + "+" + ref.length() + " that the reverse map gives to inode "
            + Long.toHexString(ref.ino()));
      }
      RunSet rest = new RunSet();
      rest.add(key, key + ref.length());
      released.runs().forEach(r -> rest.remove(r.start(), r.end()));
      boolean keyKept = false;
      for (RunSet.Run piece : rest.runs()) {
        changes.add(new RefChange(piece.start(), new Ref(ref.ino(), piece.end() - piece.start())));
        keyKept |= piece.start() == key;
      }
      if (!keyKept) {
        changes.add(new RefChange(key, null));
      }
    }
    return changes;
  }

  /** The keys of every recorded extent overlapping a released run. */
  private static TreeSet<Long> touched(NavigableMap<Long, Ref> refs, RunSet released) {
    TreeSet<Long> keys = new TreeSet<>();
    for (RunSet.Run run : released.runs()) {
      Map.Entry<Long, Ref> lower = refs.floorEntry(run.start());
      long from = lower != null && lower.getKey() + lower.getValue().length() > run.start()
          ? lower.getKey() : run.start();
      keys.addAll(refs.subMap(from, true, run.end(), false).keySet());
    }
    return keys;
  }
}

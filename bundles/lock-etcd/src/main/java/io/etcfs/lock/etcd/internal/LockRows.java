package io.etcfs.lock.etcd.internal;

import io.etcfs.spi.lock.LockMode;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.support.shell.Table;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.LongFunction;

/** The tables of the shell's {@code locks}: this node's view, or every key under locks/. */
final class LockRows {
  /**
   * One lock of this node.
   *
   * @param state held, recalling (asked back, being flushed) or waiting (queued, not granted)
   * @param token the fencing token: the lock key's create revision
   * @param forNanos how long it has been held (or awaited)
   * @param waiters conflicting requests seen queued behind it; null for a waiting request
   * @param recalls recalls of this inode's lock this node served (see {@link RecallCounts})
   */
  record Local(long inode, LockMode mode, String state, long token, long forNanos,
      Integer waiters, long recalls) {}

  private LockRows() {}

  /**
   * This node's locks; PATH (free text, the first to shrink, last so a cut keeps the columns
   * aligned) is null, shown as {@code -}, where the node knows no path.
   */
  static Table local(List<Local> rows, LongFunction<Optional<String>> paths) {
    Table t = new Table().number("INODE").id("MODE").id("STATE").number("TOKEN")
        .number("FOR_S").number("WAITERS").number("RECALLS").text("PATH");
    for (Local r : rows) {
      t.row(inode(r.inode()), code(r.mode()), r.state(), r.token(),
          r.forNanos() / 100_000_000 / 10.0, r.waiters(), r.recalls(),
          paths.apply(r.inode()).orElse(null));
    }
    return t;
  }

  /**
   * Every lock key under {@code prefix}: {@code <ino>/<lease>} valued {@code "S|X <node>"}. Each
   * inode's queue is judged as the lock service judges it (create-revision order), so a key
   * shows as held or queued.
   */
  static Table all(String prefix, List<KeyValue> kvs, LongFunction<Optional<String>> paths) {
    Map<Long, List<KeyValue>> byInode = new TreeMap<>(Long::compareUnsigned);
    for (KeyValue kv : kvs) {
      Long inode = inode(prefix, kv.keyString());
      if (inode != null) {
        byInode.computeIfAbsent(inode, i -> new ArrayList<>()).add(kv);
      }
    }
    Table t = new Table().number("INODE").id("MODE").id("STATE").id("NODE").number("TOKEN")
        .id("SESSION").text("PATH");
    byInode.forEach((inode, queue) -> {
      queue.sort(Comparator.comparingLong(KeyValue::createRevision));
      String path = paths.apply(inode).orElse(null);
      for (KeyValue kv : queue) {
        LockMode mode = EtcdLockService.mode(kv);
        String value = kv.valueString();
        boolean clean = value.endsWith(EtcdLockService.CLEAN);
        String node = value.length() > 2
            ? value.substring(2, value.length() - (clean ? EtcdLockService.CLEAN.length() : 0))
            : "?";
        t.row(inode(inode), code(mode),
            EtcdLockService.granted(queue, kv, mode) ? (clean ? "clean" : "held") : "queued",
            node, kv.createRevision(),
            Long.toHexString(kv.lease()), path);
      }
    });
    return t;
  }

  private static Long inode(String prefix, String key) {
    int slash = key.indexOf('/', prefix.length());
    if (!key.startsWith(prefix) || slash < 0) {
      return null;
    }
    try {
      return Long.parseUnsignedLong(key.substring(prefix.length(), slash), 16);
    } catch (NumberFormatException e) {
      return null;
    }
  }

  private static String code(LockMode mode) {
    return mode == LockMode.EXCLUSIVE ? "X" : "S";
  }

  /**
   * In decimal, as {@code inode}, {@code extents} and {@code ls -i} show it (the lock keys in
   * etcd keep hex); a number in JSON. Inode numbers are unsigned: one past 2^63 stays a string.
   */
  private static Object inode(long inode) {
    return inode >= 0 ? (Object) inode : Long.toUnsignedString(inode);
  }
}

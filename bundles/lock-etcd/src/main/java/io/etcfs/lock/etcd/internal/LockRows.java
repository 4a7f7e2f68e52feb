package io.etcfs.lock.etcd.internal;

import io.etcfs.spi.lock.LockMode;
import io.etcfs.spi.lock.LockReport.ClusterLock;
import io.etcfs.spi.meta.KeyValue;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Every lock key under {@code locks/} as the shell's {@code locks --all} shows it. */
final class LockRows {
  private LockRows() {}

  /**
   * Every lock key under {@code prefix}: {@code <ino>/<lease>} valued {@code "S|X <node>"}. Each
   * inode's queue is judged as the lock service judges it (create-revision order), so a key
   * shows as held or queued.
   */
  static List<ClusterLock> all(String prefix, List<KeyValue> kvs) {
    Map<Long, List<KeyValue>> byInode = new TreeMap<>(Long::compareUnsigned);
    for (KeyValue kv : kvs) {
      Long inode = inode(prefix, kv.keyString());
      if (inode != null) {
        byInode.computeIfAbsent(inode, i -> new ArrayList<>()).add(kv);
      }
    }
    List<ClusterLock> out = new ArrayList<>();
    byInode.forEach((inode, queue) -> {
      queue.sort(Comparator.comparingLong(KeyValue::createRevision));
      for (KeyValue kv : queue) {
        LockMode mode = EtcdLockService.mode(kv);
        String value = kv.valueString();
        boolean clean = value.endsWith(EtcdLockService.CLEAN);
        String node = value.length() > 2
            ? value.substring(2, value.length() - (clean ? EtcdLockService.CLEAN.length() : 0))
            : "?";
        out.add(new ClusterLock(inode, mode, EtcdLockService.granted(queue, kv, mode), clean,
            node, kv.createRevision(), Long.toHexString(kv.lease())));
      }
    });
    return out;
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
}

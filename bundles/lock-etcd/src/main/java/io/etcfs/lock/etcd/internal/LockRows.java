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
   * Every lock key ({@link LockKeys}): {@code <ino>/<lease>} valued {@code "S|X <node>"}. Each
   * inode's queue is judged as the lock service judges it (create-revision order), so a key
   * shows as held or queued. Other nodes' clean declarations are the core's inode fences, not
   * here: {@code clean} is false.
   */
  static List<ClusterLock> all(LockKeys keys, List<KeyValue> kvs) {
    Map<Long, List<KeyValue>> byInode = new TreeMap<>(Long::compareUnsigned);
    for (KeyValue kv : kvs) {
      LockKeys.Parts parts = keys.parse(kv.keyString());
      if (parts != null) {
        byInode.computeIfAbsent(parts.inode(), i -> new ArrayList<>()).add(kv);
      }
    }
    List<ClusterLock> out = new ArrayList<>();
    byInode.forEach((inode, queue) -> {
      queue.sort(Comparator.comparingLong(KeyValue::createRevision));
      for (KeyValue kv : queue) {
        LockMode mode = LockKeys.mode(kv);
        out.add(new ClusterLock(inode, mode, LockQueue.granted(queue, kv, mode), false,
            LockKeys.node(kv), kv.createRevision(), Long.toHexString(kv.lease())));
      }
    });
    return out;
  }
}

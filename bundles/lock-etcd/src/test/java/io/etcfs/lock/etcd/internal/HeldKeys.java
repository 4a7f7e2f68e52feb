package io.etcfs.lock.etcd.internal;

import io.etcfs.spi.lock.HeldLock;
import io.etcfs.spi.lock.LockMode;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.MetaStore;

/** What the lock tests check in etcd: whether a grant's key still stands as granted. */
final class HeldKeys {
  private HeldKeys() {}

  /**
   * Whether {@code lock}'s key (filesystem {@code f}) stands in {@code store} as that grant: its
   * create revision is the lock's fencing token and its value names the lock's mode. (Whether a
   * commit applies is the core's inode fence's business, not the backend's.)
   */
  static boolean standing(MetaStore store, HeldLock lock) {
    return store.get(key("f", lock))
        .filter(kv -> kv.createRevision() == lock.fencingToken())
        .filter(kv -> kv.valueString().startsWith(lock.mode() == LockMode.SHARED ? "S" : "X"))
        .isPresent();
  }

  /** The key of {@code lock} in filesystem {@code fs}. */
  static byte[] key(String fs, HeldLock lock) {
    return Keys.of("/etcfs/" + fs + "/locks/" + String.format("%016x", lock.inode()) + "/"
        + String.format("%016x", lock.sessionId()));
  }
}

package io.etcfs.core.fs.plock;

import io.etcfs.core.fs.meta.FsKeys;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.Vfs;
import java.nio.charset.StandardCharsets;
import java.util.function.BooleanSupplier;

/**
 * flock(2) locks, cluster-wide: one key per owner (an open file description) under the inode's
 * flock table, {@code S} or {@code X}. A table of its own, so flock and fcntl locks never
 * conflict, as on Linux.
 */
final class FileLocks {
  private static final String SHARED = "S";
  private static final String EXCLUSIVE = "X";

  private final FsKeys keys;
  private final String node;
  private final FileLockTable table;
  private final Held held;
  private final Waits waits;

  FileLocks(FsKeys keys, String node, FileLockTable table, Held held, Waits waits) {
    this.keys = keys;
    this.node = node;
    this.table = table;
    this.held = held;
    this.waits = waits;
  }

  void flock(long ino, long owner, int op, BooleanSupplier interrupted) throws FsException {
    boolean wait = (op & Vfs.LOCK_NB) == 0;
    switch (op & ~Vfs.LOCK_NB) {
      case Vfs.LOCK_UN -> unlock(ino, owner);
      case Vfs.LOCK_SH -> lock(ino, owner, SHARED, wait, interrupted);
      case Vfs.LOCK_EX -> lock(ino, owner, EXCLUSIVE, wait, interrupted);
      default -> throw new FsException(Errno.EINVAL, "flock of inode " + ino
          + ": unknown operation " + op);
    }
  }

  private void lock(long ino, long owner, String mode, boolean wait,
      BooleanSupplier interrupted) throws FsException {
    byte[] t = keys.flocks(ino);
    byte[] own = FileLockTable.ownerKey(t, node, owner);
    String id = new String(own, StandardCharsets.UTF_8);
    String what = "flock of inode " + ino;
    long deadline = waits.deadline();
    int races = 0; // commits lost to another owner's change, not wake-ups of a wait
    while (true) {
      FileLockTable.Snapshot s = table.read(t, own);
      String current = s.own() == null ? null : s.own().valueString();
      if (mode.equals(current)) {
        return;
      }
      KeyValue holder = conflicting(s, mode);
      if (holder == null) {
        held.mark(id);
        if (table.commit(t, own, s, mode)) {
          return;
        }
      } else if (current != null) {
        // Linux converts a flock lock by dropping the old one first, then asking for the new
        // one: a conversion that has to wait (or fails with LOCK_NB) has let go of the old lock.
        if (table.commit(t, own, s, null)) {
          continue;
        }
      } else if (!wait) {
        throw new FsException(Errno.EAGAIN, what + ": held by " + holder.keyString());
      } else {
        waits.await(table, t, s.revision(), deadline, interrupted, what);
        continue;
      }
      waits.conflict(races++, what);
    }
  }

  private void unlock(long ino, long owner) throws FsException {
    byte[] t = keys.flocks(ino);
    byte[] own = FileLockTable.ownerKey(t, node, owner);
    String id = new String(own, StandardCharsets.UTF_8);
    Object token = held.token(id);
    if (token == null) {
      return; // the release of a file that was never flock-ed on this node
    }
    for (int attempt = 0; ; attempt++) {
      FileLockTable.Snapshot s = table.read(t, own);
      if (s.own() == null || table.commit(t, own, s, null)) {
        held.forget(id, token);
        return;
      }
      waits.conflict(attempt, "flock unlock of inode " + ino);
    }
  }

  private static KeyValue conflicting(FileLockTable.Snapshot s, String mode) {
    for (KeyValue kv : s.others()) {
      if (mode.equals(EXCLUSIVE) || kv.valueString().equals(EXCLUSIVE)) {
        return kv;
      }
    }
    return null;
  }
}

package io.etcfs.core.fs.plock;

import io.etcfs.core.fs.meta.FsKeys;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.PosixLock;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.function.BooleanSupplier;

/**
 * fcntl byte-range locks, cluster-wide: each owner's ranges are one key under the inode's
 * table, and every change is decided against every other owner's key and committed atomically
 * with respect to them ({@link FileLockTable}).
 */
final class RangeLocks {
  /**
   * The most spans one owner may hold on one inode: the record must stay far below etcd's request
   * limit (1.5 MiB). Past it a lock fails with ENOLCK, as the kernel does when it runs out of
   * lock records.
   */
  static final int MAX_SPANS = 4096;

  private final FsKeys keys;
  private final String node;
  private final FileLockTable table;
  private final Held held;
  private final Waits waits;

  RangeLocks(FsKeys keys, String node, FileLockTable table, Held held, Waits waits) {
    this.keys = keys;
    this.node = node;
    this.table = table;
    this.held = held;
    this.waits = waits;
  }

  PosixLock getlk(long ino, long owner, PosixLock wanted) throws FsException {
    check(ino, wanted, false);
    byte[] t = keys.posixLocks(ino);
    FileLockTable.Snapshot s = table.read(t, FileLockTable.ownerKey(t, node, owner));
    boolean write = wanted.type() == PosixLock.Type.WRITE;
    byte[] local = FileLockTable.nodePrefix(t, node);
    for (KeyValue kv : s.others()) {
      OwnerRanges r = OwnerRanges.decode(kv.valueString());
      Span c = r.conflict(write, wanted.start(), wanted.end());
      if (c != null) {
        return c.toLock(startsWith(kv.key(), local) ? r.pid() : 0);
      }
    }
    return PosixLock.none(wanted.start(), wanted.end());
  }

  void setlk(long ino, long owner, PosixLock lock, boolean wait, BooleanSupplier interrupted)
      throws FsException {
    check(ino, lock, true);
    byte[] t = keys.posixLocks(ino);
    byte[] own = FileLockTable.ownerKey(t, node, owner);
    String id = new String(own, StandardCharsets.UTF_8);
    boolean unlock = lock.type() == PosixLock.Type.UNLOCK;
    Object token = held.token(id);
    if (unlock && token == null) {
      return; // the unlock libfuse sends on every close, for an owner that holds nothing here
    }
    String what = "fcntl lock of inode " + ino;
    long deadline = waits.deadline();
    int races = 0; // commits lost to another owner's change, not wake-ups of a wait
    while (true) {
      FileLockTable.Snapshot s = table.read(t, own);
      if (!unlock) {
        KeyValue holder = conflicting(s, lock);
        if (holder != null) {
          if (!wait) {
            throw new FsException(Errno.EAGAIN, what + ": held by " + holder.keyString());
          }
          waits.await(table, t, s.revision(), deadline, interrupted, what);
          continue;
        }
      }
      OwnerRanges mine = s.own() == null ? OwnerRanges.NONE
          : OwnerRanges.decode(s.own().valueString());
      OwnerRanges next = mine.with(lock.type(), lock.start(), lock.end(), lock.pid());
      if (next.sameSpans(mine) && (s.own() != null || next.isEmpty())) {
        if (next.isEmpty()) {
          held.forget(id, token);
        }
        return;
      }
      if (next.spans().size() > MAX_SPANS) {
        throw new FsException(Errno.ENOLCK, what + ": more than " + MAX_SPANS
            + " separate ranges for one owner");
      }
      if (!next.isEmpty()) {
        held.mark(id);
      }
      if (table.commit(t, own, s, next.isEmpty() ? null : next.encode())) {
        if (next.isEmpty()) {
          held.forget(id, token);
        }
        return;
      }
      waits.conflict(races++, what);
    }
  }

  private static KeyValue conflicting(FileLockTable.Snapshot s, PosixLock lock) {
    boolean write = lock.type() == PosixLock.Type.WRITE;
    for (KeyValue kv : s.others()) {
      if (OwnerRanges.decode(kv.valueString()).conflict(write, lock.start(), lock.end())
          != null) {
        return kv;
      }
    }
    return null;
  }

  private static void check(long ino, PosixLock lock, boolean unlockAllowed) throws FsException {
    if (!lock.validRange()) {
      throw new FsException(Errno.EINVAL, "fcntl lock of inode " + ino + ": bad range "
          + lock.start() + ".." + lock.end());
    }
    if (!unlockAllowed && lock.type() == PosixLock.Type.UNLOCK) {
      throw new FsException(Errno.EINVAL, "F_GETLK of inode " + ino + " with F_UNLCK");
    }
  }

  private static boolean startsWith(byte[] key, byte[] prefix) {
    return key.length >= prefix.length
        && Arrays.equals(key, 0, prefix.length, prefix, 0, prefix.length);
  }
}

package io.etcfs.core.fs;

import io.etcfs.core.fs.meta.Inode;
import io.etcfs.spi.vfs.SetAttr;

/**
 * chmod, chown and utimens of a file this node has open and holds exclusively, buffered like
 * its data and committed in the same transaction (tar and cp -p set owner, mode and times on the
 * open file before close: four transactions a file became one). Other nodes see them when they
 * see the data: their stat recalls the lock, which commits both. Immutable; a {@link FileData}
 * holds the current one under its lock.
 *
 * <p>Owner and mode are whole values (a later change on this node starts from them); the times
 * are kept only if set explicitly, and a write after an explicit modification time sets it again
 * (the write's commit stamps its own), as the order of the calls says.
 */
record PendingAttrs(int mode, int uid, int gid, Long atimeNs, Long mtimeNs, long ctimeNs) {

  /** What {@code c} left: {@code done} is the inode as changed, {@code before} what was pending. */
  static PendingAttrs after(Inode done, SetAttr c, PendingAttrs before) {
    Long atime = c.atimeNs() != null ? Long.valueOf(done.atimeNs())
        : before == null ? null : before.atimeNs;
    Long mtime = c.mtimeNs() != null ? Long.valueOf(done.mtimeNs())
        : before == null ? null : before.mtimeNs;
    return new PendingAttrs(done.mode(), done.uid(), done.gid(), atime, mtime, done.ctimeNs());
  }

  /** {@code i} (as committed, or as a data commit is about to write it) with these on top. */
  Inode applyTo(Inode i) {
    return i.withMode(mode).withOwner(uid, gid).withTimes(
        atimeNs != null ? atimeNs : i.atimeNs(), mtimeNs != null ? mtimeNs : i.mtimeNs(),
        Math.max(i.ctimeNs(), ctimeNs));
  }

  /** After a write: its own time wins over a modification time set before it. */
  PendingAttrs afterWrite() {
    return mtimeNs == null ? this : new PendingAttrs(mode, uid, gid, atimeNs, null, ctimeNs);
  }

  /** With the set-ID bits a write or truncate took away. */
  PendingAttrs withMode(int newMode, long ctime) {
    return new PendingAttrs(newMode, uid, gid, atimeNs, mtimeNs, Math.max(ctimeNs, ctime));
  }
}

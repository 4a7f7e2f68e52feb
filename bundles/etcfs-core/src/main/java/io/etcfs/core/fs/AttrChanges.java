package io.etcfs.core.fs;

import io.etcfs.core.fs.meta.Codec;
import io.etcfs.core.fs.meta.Inode;
import io.etcfs.spi.vfs.Attr;
import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.SetAttr;

/**
 * chmod, chown and utimens (truncate goes through the data path first), and the set-ID bits a
 * write or truncate takes away.
 */
final class AttrChanges {
  private final Ctx ctx;

  AttrChanges(Ctx ctx) {
    this.ctx = ctx;
  }

  Attr apply(long ino, SetAttr c, Caller caller) throws FsException {
    return apply(ino, c, caller, tx -> null);
  }

  /** As {@link #apply(long, SetAttr, Caller)}, with {@code fence} added to its transaction. */
  Attr apply(long ino, SetAttr c, Caller caller, io.etcfs.core.fs.tx.TxBody<Void> fence)
      throws FsException {
    return ctx.tx.run("setattr " + ino, tx -> {
      fence.run(tx);
      Inode i = Records.inode(tx.get(ctx.keys.inode(ino)), ino);
      if (i.isDir()) {
        // fold the blind-written times in and drop them, so an explicit utimens sticks
        i = Lookups.withDirTimes(i, tx.get(ctx.keys.dirTimes(ino)));
        tx.delete(ctx.keys.dirTimes(ino));
      }
      Inode done = changed(i, c, caller, Ctx.now());
      tx.put(ctx.keys.inode(ino), Codec.inode(done));
      return done.toAttr(ctx.blockSize);
    });
  }

  /** {@code i} after {@code c} by {@code caller} at {@code now}, or EPERM. */
  static Inode changed(Inode i, SetAttr c, Caller caller, long now) throws FsException {
    i = chmod(i, c, caller);
    i = chown(i, c, caller);
    i = times(i, c, caller, now);
    return i.withCtime(now);
  }

  /**
   * After a write or truncate by {@code caller}: clears the set-ID bits {@link SetIds} says must
   * go. One transaction when there are some (rare), none otherwise.
   */
  void afterDataChange(long ino, Caller caller) throws FsException {
    if (caller.isRoot()) {
      return;
    }
    Inode cached = Records.inode(ctx.cache.get(ctx.keys.inode(ino)), ino);
    if (!SetIds.dataChangeDrops(cached, caller)) {
      return;
    }
    ctx.tx.run("clear set-id bits of " + ino, tx -> {
      Inode i = Records.inode(tx.get(ctx.keys.inode(ino)), ino);
      if (SetIds.dataChangeDrops(i, caller)) {
        tx.put(ctx.keys.inode(ino),
            Codec.inode(i.withMode(SetIds.afterDataChange(i, caller)).withCtime(Ctx.now())));
      }
      return null;
    });
  }

  private static Inode chmod(Inode i, SetAttr c, Caller caller) throws FsException {
    if (c.mode() == null) {
      return i;
    }
    boolean owner = caller.isRoot() || caller.uid() == i.uid();
    if (!owner && !SetIds.onlyDrops(i, c.mode())) {
      throw new FsException(Errno.EPERM, "chmod of " + i.ino() + " by non-owner");
    }
    return i.withMode(SetIds.chmod(i, c.mode(), caller));
  }

  private static Inode chown(Inode i, SetAttr c, Caller caller) throws FsException {
    int uid = c.uid() == null ? i.uid() : c.uid();
    int gid = c.gid() == null ? i.gid() : c.gid();
    if (uid == i.uid() && gid == i.gid()) {
      return i;
    }
    if (!caller.isRoot()) {
      boolean ownGroupChange = uid == i.uid() && caller.uid() == i.uid()
          && caller.inGroup(gid);
      if (!ownGroupChange) {
        throw new FsException(Errno.EPERM, "chown of " + i.ino() + " not permitted");
      }
    }
    return i.withOwner(uid, gid).withMode(SetIds.afterChown(i, caller));
  }

  private static Inode times(Inode i, SetAttr c, Caller caller, long now) throws FsException {
    boolean explicit = (c.atimeNs() != null && c.atimeNs() != SetAttr.NOW)
        || (c.mtimeNs() != null && c.mtimeNs() != SetAttr.NOW);
    if (explicit && !caller.isRoot() && caller.uid() != i.uid()) {
      throw new FsException(Errno.EPERM, "setting times of " + i.ino() + " by non-owner");
    }
    long a = c.atimeNs() == null ? i.atimeNs() : c.atimeNs() == SetAttr.NOW ? now : c.atimeNs();
    long m = c.mtimeNs() == null ? i.mtimeNs() : c.mtimeNs() == SetAttr.NOW ? now : c.mtimeNs();
    return i.withTimes(a, m, i.ctimeNs());
  }
}

package io.etcfs.core.fs;

import io.etcfs.core.fs.meta.Codec;
import io.etcfs.core.fs.meta.Inode;
import io.etcfs.spi.vfs.Attr;
import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.SetAttr;

/** chmod, chown and utimens (truncate goes through the data path first). */
final class AttrChanges {
  private final Ctx ctx;

  AttrChanges(Ctx ctx) {
    this.ctx = ctx;
  }

  Attr apply(long ino, SetAttr c, Caller caller) throws FsException {
    return ctx.tx.run("setattr " + ino, tx -> {
      Inode i = Records.inode(tx.get(ctx.keys.inode(ino)), ino);
      if (i.isDir()) {
        // fold the blind-written times in and drop them, so an explicit utimens sticks
        i = Lookups.withDirTimes(i, tx.get(ctx.keys.dirTimes(ino)));
        tx.delete(ctx.keys.dirTimes(ino));
      }
      long now = Ctx.now();
      i = chmod(i, c, caller);
      i = chown(i, c, caller);
      i = times(i, c, caller, now);
      Inode done = i.withCtime(now);
      tx.put(ctx.keys.inode(ino), Codec.inode(done));
      return done.toAttr(ctx.blockSize);
    });
  }

  private static Inode chmod(Inode i, SetAttr c, Caller caller) throws FsException {
    if (c.mode() == null) {
      return i;
    }
    if (!caller.isRoot() && caller.uid() != i.uid()) {
      throw new FsException(Errno.EPERM, "chmod of " + i.ino() + " by non-owner");
    }
    int mode = (i.mode() & Attr.S_IFMT) | (c.mode() & 07777);
    if (!caller.isRoot() && !i.isDir() && !Names.inGroup(caller, i.gid())) {
      mode &= ~Attr.S_ISGID;
    }
    return i.withMode(mode);
  }

  private static Inode chown(Inode i, SetAttr c, Caller caller) throws FsException {
    int uid = c.uid() == null ? i.uid() : c.uid();
    int gid = c.gid() == null ? i.gid() : c.gid();
    if (uid == i.uid() && gid == i.gid()) {
      return i;
    }
    if (!caller.isRoot()) {
      boolean ownGroupChange = uid == i.uid() && caller.uid() == i.uid()
          && Names.inGroup(caller, gid);
      if (!ownGroupChange) {
        throw new FsException(Errno.EPERM, "chown of " + i.ino() + " not permitted");
      }
    }
    int mode = i.mode();
    if (!i.isDir()) {
      // a new owner must not inherit set-id powers (as Linux does for non-directories)
      mode &= ~Attr.S_ISUID;
      if ((mode & 0010) != 0) {
        mode &= ~Attr.S_ISGID;
      }
    }
    return i.withOwner(uid, gid).withMode(mode);
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

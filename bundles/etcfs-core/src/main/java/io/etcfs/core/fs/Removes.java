package io.etcfs.core.fs;

import io.etcfs.core.fs.meta.Codec;
import io.etcfs.core.fs.meta.Inode;
import io.etcfs.core.fs.meta.NameHash;
import io.etcfs.core.fs.tx.MetaTx;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;

/** unlink and rmdir, and what happens to an inode whose last link goes. */
final class Removes {
  private final Ctx ctx;
  private final Creates creates;
  private final Purger purger;
  private final OpenFiles open;

  Removes(Ctx ctx, Creates creates, Purger purger, OpenFiles open) {
    this.ctx = ctx;
    this.creates = creates;
    this.purger = purger;
    this.open = open;
  }

  void unlink(long dir, String name, Caller caller) throws FsException {
    Names.check(name);
    if (name.equals(".") || name.equals("..")) {
      throw new FsException(Errno.EISDIR, "unlink of '" + name + "'");
    }
    ctx.tx.run("unlink " + name + " in " + dir, tx -> {
      unlinkIn(tx, dir, name, caller);
      return null;
    });
  }

  /**
   * The unlink of {@code name} in {@code dir}, into {@code tx}: checked against what the
   * transaction reads (every failure before the first write), then its writes.
   */
  void unlinkIn(MetaTx tx, long dir, String name, Caller caller) throws FsException {
    Inode parent = creates.parent(tx, dir, false);
    byte[] entry = ctx.keys.dirent(dir, NameHash.of(name), name);
    Codec.Dirent e = Records.dirent(tx.get(entry).orElseThrow(
        () -> new FsException(Errno.ENOENT, "no '" + name + "' in " + dir)));
    Inode victim = Records.inode(tx.get(ctx.keys.inode(e.ino())), e.ino());
    if (victim.isDir()) {
      throw new FsException(Errno.EISDIR, "'" + name + "' is a directory");
    }
    Names.checkSticky(parent, victim, caller);
    long now = Ctx.now();
    tx.delete(entry);
    creates.touchDir(tx, dir, now);
    dropLink(tx, victim, now);
  }

  /**
   * Takes one link from a non-directory. At the last link an inode nobody here has open goes at
   * once, its blocks released in this same transaction; one still open here (or too large to
   * release in one transaction) becomes an orphan with nlink 0, purged at its last release here
   * or right after this commit.
   */
  void dropLink(MetaTx tx, Inode victim, long now) throws FsException {
    long ino = victim.ino();
    if (victim.nlink() > 1) {
      tx.put(ctx.keys.inode(ino), Codec.inode(victim.withNlink(victim.nlink() - 1).withCtime(now)));
      return;
    }
    boolean busy = open.isOpen(ino);
    tx.afterCommit(ctx.releasing::unlinked); // a write that finds no space waits a moment
    if (!busy && purger.removeNow(tx, ino)) {
      return;
    }
    tx.put(ctx.keys.inode(ino), Codec.inode(victim.withNlink(0).withCtime(now)));
    tx.put(ctx.keys.orphan(ino), DeadNodeSweep.orphanRecord(ctx.membership, now));
    if (!busy) {
      tx.afterCommit(() -> purger.later(ino));
    } else {
      // its last release may come before this commit does, and find it still linked
      tx.afterCommit(() -> {
        if (!open.orphanedWhileOpen(ino)) {
          purger.later(ino);
        }
      });
    }
  }

  void rmdir(long dir, String name, Caller caller) throws FsException {
    Names.check(name);
    if (name.equals(".")) {
      throw new FsException(Errno.EINVAL, "rmdir of '.'");
    }
    if (name.equals("..")) {
      throw new FsException(Errno.ENOTEMPTY, "rmdir of '..'");
    }
    ctx.tx.run("rmdir " + name + " in " + dir, tx -> {
      Inode parent = creates.parent(tx, dir, true);
      byte[] entry = ctx.keys.dirent(dir, NameHash.of(name), name);
      Codec.Dirent e = Records.dirent(tx.get(entry).orElseThrow(
          () -> new FsException(Errno.ENOENT, "no '" + name + "' in " + dir)));
      Inode victim = Records.inode(tx.get(ctx.keys.inode(e.ino())), e.ino());
      Names.requireDir(victim);
      Names.checkSticky(parent, victim, caller);
      requireEmpty(tx, victim.ino());
      long now = Ctx.now();
      tx.delete(entry);
      removeDir(tx, victim.ino());
      tx.put(ctx.keys.inode(dir), Codec.inode(parent.withNlink(parent.nlink() - 1).withCtime(now)));
      creates.touchDir(tx, dir, now);
      return null;
    });
  }

  /**
   * Fails with ENOTEMPTY unless the directory has no entry. A range cannot be compared, but every
   * entry change in a directory writes its {@code m/<dir>}: comparing that key makes a create
   * racing with this check fail the commit.
   */
  void requireEmpty(MetaTx tx, long dir) throws FsException {
    tx.get(ctx.keys.dirTimes(dir));
    byte[] p = ctx.keys.direntPrefix(dir);
    if (!tx.range(p, Keys.prefixEnd(p), 1).kvs().isEmpty()) {
      throw new FsException(Errno.ENOTEMPTY, "directory " + dir + " is not empty");
    }
  }

  void removeDir(MetaTx tx, long dir) {
    tx.delete(ctx.keys.inode(dir));
    tx.delete(ctx.keys.inodeFence(dir));
    tx.delete(ctx.keys.dirTimes(dir));
    tx.deletePrefix(ctx.keys.xattrPrefix(dir));
  }
}

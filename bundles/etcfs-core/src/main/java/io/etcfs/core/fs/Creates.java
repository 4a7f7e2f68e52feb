package io.etcfs.core.fs;

import io.etcfs.core.fs.cache.MetaCache;
import io.etcfs.core.fs.meta.Codec;
import io.etcfs.core.fs.meta.ExtentChunks;
import io.etcfs.core.fs.meta.Inode;
import io.etcfs.core.fs.meta.NameHash;
import io.etcfs.core.fs.tx.MetaTx;
import io.etcfs.core.fs.tx.OutcomeUnknownException;
import io.etcfs.spi.lock.CreateGrant;
import io.etcfs.spi.meta.Compare;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.vfs.Attr;
import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;

/** mknod, mkdir, symlink, link and the create of an open(O_CREAT): each one transaction. */
final class Creates {
  private final Ctx ctx;
  private final InodeLocks locks;

  Creates(Ctx ctx, InodeLocks locks) {
    this.ctx = ctx;
    this.locks = locks;
  }

  /**
   * A regular file created to be opened ({@code open(O_CREAT)}: what tar, cp and a shell's
   * redirection use): its transaction also grants this node the file's exclusive lock, so the
   * writes that usually follow need no lock round trip.
   */
  Attr createFile(long dir, String name, int mode, Caller caller) throws FsException {
    return create(dir, name, Attr.S_IFREG | (mode & 07777), 0, null, caller, true);
  }

  Attr mknod(long dir, String name, int mode, long rdev, Caller caller) throws FsException {
    int type = mode & Attr.S_IFMT;
    switch (type) {
      case 0 -> mode |= Attr.S_IFREG;
      case Attr.S_IFREG, Attr.S_IFIFO, Attr.S_IFSOCK, Attr.S_IFCHR, Attr.S_IFBLK -> { }
      case Attr.S_IFDIR -> throw new FsException(Errno.EPERM, "mknod of a directory");
      default -> throw new FsException(Errno.EINVAL, "mknod of type " + Integer.toOctalString(type));
    }
    boolean device = type == Attr.S_IFCHR || type == Attr.S_IFBLK;
    return create(dir, name, mode, device ? rdev : 0, null, caller, false);
  }

  /**
   * Its transaction also grants this node the new directory's exclusive lock, where the backend
   * can: the directory is then delegated here from the start (see {@link
   * Delegations#madeDirectory}), so the files that usually follow (tar x, cp -r, a build) are
   * created from the queue.
   */
  Attr mkdir(long dir, String name, int mode, Caller caller) throws FsException {
    return create(dir, name, Attr.S_IFDIR | (mode & 07777), 0, null, caller,
        Delegations.ENABLED);
  }

  Attr symlink(long dir, String name, String target, Caller caller) throws FsException {
    Lookups.checkTarget(target);
    return create(dir, name, Attr.S_IFLNK | 0777, 0, target, caller, false);
  }

  /**
   * @param lock whether the transaction also grants this node the new inode's exclusive lock
   *     (a regular file's for its writes, a directory's for its delegation):
   *     each attempt builds its own grant (a retry may run under a new lock session), and only
   *     the attempt that commits is adopted. An attempt that fails (EEXIST, a conflict, a lock
   *     session's lease gone) changed nothing, so it left no lock key either; one whose outcome
   *     is unknown has its key removed.
   */
  private Attr create(long dir, String name, int mode, long rdev, String target, Caller caller,
      boolean lock) throws FsException {
    Names.checkNew(name);
    long ino = ctx.inos.next();
    long xattrsEpoch = ctx.cache.groupEpoch(MetaCache.xattrsSlot(ino));
    CreateGrant[] grant = new CreateGrant[1];
    Attr created;
    try {
      created = ctx.tx.run("create " + name + " in " + dir, tx -> {
        Attr a = createIn(tx, dir, name, ino, mode, rdev, target, caller, xattrsEpoch);
        grant[0] = lock ? locks.grantOnCreate(tx, ino) : null;
        return a;
      });
    } catch (OutcomeUnknownException e) {
      if (grant[0] != null) {
        locks.abandonCreated(grant[0]);
      }
      throw e;
    }
    ctx.names.remember(ino, dir, name);
    return created;
  }

  private Attr createIn(MetaTx tx, long dir, String name, long ino, int mode, long rdev,
      String target, Caller caller, long xattrsEpoch) throws FsException {
    boolean isDir = (mode & Attr.S_IFMT) == Attr.S_IFDIR;
    Inode parent = parent(tx, dir, isDir);
    Inode child = newInode(parent, dir, ino, mode, rdev, target, caller);
    putNew(tx, dir, name, child, xattrsEpoch);
    if (isDir) {
      tx.put(ctx.keys.inode(dir), Codec.inode(parent.withNlink(parent.nlink() + 1)));
      // empty: the first look-up in it (tar x, mkdir -p) needs no read
      long token = ctx.cache.scopeToken();
      tx.afterCommitAt(revision -> ctx.cache.primeNew(ctx.keys.direntPrefix(ino),
          java.util.List.of(ctx.keys.dirTimes(ino)), revision, token));
    }
    return child.toAttr(ctx.blockSize);
  }

  /** The record of a new inode in {@code parent} (its group and set-ID bits from the parent's). */
  static Inode newInode(Inode parent, long dir, long ino, int mode, long rdev, String target,
      Caller caller) {
    boolean isDir = (mode & Attr.S_IFMT) == Attr.S_IFDIR;
    int gid = (parent.mode() & Attr.S_ISGID) != 0 ? parent.gid() : caller.gid();
    int m = SetIds.forNew(parent, mode, caller);
    long now = Ctx.now();
    long size = target == null ? 0 : target.getBytes(StandardCharsets.UTF_8).length;
    return new Inode(ino, m, caller.uid(), gid, isDir ? 2 : 1, size, rdev, 0,
        isDir ? dir : 0, now, now, now, target);
  }

  /**
   * Writes {@code child} and its entry {@code name} in {@code dir} (which must be free: EEXIST),
   * and the directory's times; the parent's guard is the caller's ({@link #parent}).
   */
  void putNew(MetaTx tx, long dir, String name, Inode child, long xattrsEpoch)
      throws FsException {
    putNew(tx, dir, name, child, xattrsEpoch, ExtentChunks.empty());
  }

  /**
   * As above, for a file whose create also carries its data: {@code chunks} is its extent map,
   * which the transaction writes too (see {@link Flusher#carry}).
   */
  void putNew(MetaTx tx, long dir, String name, Inode child, long xattrsEpoch,
      ExtentChunks chunks) throws FsException {
    byte[] entry = ctx.keys.dirent(dir, NameHash.of(name), name);
    if (tx.get(entry).isPresent()) {
      throw new FsException(Errno.EEXIST, "'" + name + "' exists in " + dir);
    }
    long ino = child.ino();
    tx.put(ctx.keys.inode(ino), Codec.inode(child));
    tx.put(entry, Codec.dirent(new Codec.Dirent(ino, child.type())));
    touchDir(tx, dir, child.ctimeNs());
    // A new inode has no xattrs and no extents but these: its creator knows without reading.
    tx.afterCommitAt(revision -> {
      ctx.cache.putGroup(MetaCache.extentsSlot(ino), new Extents.Snapshot(child, revision, chunks));
      ctx.cache.primeGroup(MetaCache.xattrsSlot(ino), Map.of(), xattrsEpoch);
    });
  }

  Attr link(long ino, long dir, String name, Caller caller) throws FsException {
    Names.checkNew(name);
    Attr result = ctx.tx.run("link " + ino + " as " + name, tx -> {
      Inode src = Records.inode(tx.get(ctx.keys.inode(ino)), ino);
      if (src.isDir()) {
        throw new FsException(Errno.EPERM, "hard link to directory " + ino);
      }
      if (src.nlink() == 0) {
        throw new FsException(Errno.ENOENT, "inode " + ino + " was unlinked");
      }
      parent(tx, dir, false);
      byte[] entry = ctx.keys.dirent(dir, NameHash.of(name), name);
      if (tx.get(entry).isPresent()) {
        throw new FsException(Errno.EEXIST, "'" + name + "' exists in " + dir);
      }
      long now = Ctx.now();
      Inode linked = src.withNlink(src.nlink() + 1).withCtime(now);
      tx.put(ctx.keys.inode(ino), Codec.inode(linked));
      tx.put(entry, Codec.dirent(new Codec.Dirent(ino, src.type())));
      touchDir(tx, dir, now);
      return linked.toAttr(ctx.blockSize);
    });
    ctx.names.remember(ino, dir, name);
    return result;
  }

  /**
   * The directory an entry goes into. Only a change of its link count needs its exact revision;
   * otherwise the guard is that it still exists as the same incarnation (its create revision),
   * so that creates from many nodes into one directory do not conflict with each other.
   */
  Inode parent(MetaTx tx, long dir, boolean exact) throws FsException {
    byte[] key = ctx.keys.inode(dir);
    Optional<KeyValue> kv = exact ? tx.get(key) : tx.peek(key);
    Inode parent = Records.inode(kv, dir);
    Names.requireDir(parent);
    if (!exact) {
      tx.guard(Compare.createRevision(key, kv.get().createRevision()));
    }
    return parent;
  }

  /** Blind write of a directory's times: concurrent creates in one directory never conflict. */
  void touchDir(MetaTx tx, long dir, long now) {
    tx.put(ctx.keys.dirTimes(dir), Codec.dirTimes(new Codec.DirTimes(now, now)));
  }
}

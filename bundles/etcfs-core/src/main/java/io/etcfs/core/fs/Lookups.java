package io.etcfs.core.fs;

import io.etcfs.core.fs.meta.Codec;
import io.etcfs.core.fs.meta.Inode;
import io.etcfs.core.fs.meta.NameHash;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.vfs.Attr;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.Vfs;
import java.util.Optional;

/** Reads of the namespace, all served from the watch-coherent cache. */
final class Lookups {
  private static final int MAX_SYMLINK = 4096;
  private final Ctx ctx;

  /** Names unlinked on this node whose commit is still queued (directory delegation). */
  private volatile java.util.function.BiPredicate<Long, String> gone = (dir, name) -> false;

  Lookups(Ctx ctx) {
    this.ctx = ctx;
  }

  /** Files created on this node whose create is still queued (directory delegation). */
  private volatile Queued queued = new Queued() {
    @Override
    public Inode inode(long ino) {
      return null;
    }

    @Override
    public Codec.Dirent entry(long dir, String name) {
      return null;
    }

    @Override
    public boolean unlinked(long ino) {
      return false;
    }

    @Override
    public Inode pending(Inode dir) {
      return dir;
    }
  };

  /** What this node has answered but not committed yet: seen by every look-up here. */
  interface Queued {
    /** The record of {@code ino} if its create is queued, else null. */
    Inode inode(long ino);

    /** The entry of {@code name} in {@code dir} if its create is queued, else null. */
    Codec.Dirent entry(long dir, String name);

    /** Whether the unlink of {@code ino}'s only name is queued: gone here already. */
    boolean unlinked(long ino);

    /** Directory {@code dir} (as committed) with its own attribute changes queued here. */
    Inode pending(Inode dir);
  }

  void setGone(java.util.function.BiPredicate<Long, String> gone) {
    this.gone = gone;
  }

  void setQueued(Queued queued) {
    this.queued = queued;
  }

  Inode inode(long ino) throws FsException {
    Inode q = queued.inode(ino);
    if (q != null) {
      return q;
    }
    if (queued.unlinked(ino)) {
      throw new FsException(Errno.ENOENT, "inode " + ino + " was unlinked");
    }
    Inode i = Records.inode(ctx.cache.get(ctx.keys.inode(ino)), ino);
    if (!i.isDir()) {
      return i;
    }
    return queued.pending(withDirTimes(i, ctx.cache.get(ctx.keys.dirTimes(ino))));
  }

  Attr getattr(long ino) throws FsException {
    return inode(ino).toAttr(ctx.blockSize);
  }

  /**
   * A directory's times are the later of its inode's and of {@code m/<dir>}, which entry changes
   * write blindly so that creates in one directory from many nodes never conflict.
   */
  static Inode withDirTimes(Inode dir, Optional<KeyValue> times) throws FsException {
    if (times.isEmpty()) {
      return dir;
    }
    Codec.DirTimes t = Records.dirTimes(times.get());
    return dir.withTimes(dir.atimeNs(), Math.max(dir.mtimeNs(), t.mtimeNs()),
        Math.max(dir.ctimeNs(), t.ctimeNs()));
  }

  Optional<Codec.Dirent> entry(long dir, String name) throws FsException {
    Codec.Dirent q = queued.entry(dir, name);
    if (q != null) {
      return Optional.of(q);
    }
    Optional<KeyValue> kv = ctx.cache.get(ctx.keys.dirent(dir, NameHash.of(name), name));
    return kv.isEmpty() ? Optional.empty() : Optional.of(Records.dirent(kv.get()));
  }

  Attr lookup(long dir, String name) throws FsException {
    Names.check(name);
    Inode d = inode(dir);
    Names.requireDir(d);
    if (name.equals(".")) {
      return d.toAttr(ctx.blockSize);
    }
    if (name.equals("..")) {
      return getattr(d.parent());
    }
    if (gone.test(dir, name)) {
      throw new FsException(Errno.ENOENT, "no '" + name + "' in " + dir + " (unlinked)");
    }
    Codec.Dirent e = entry(dir, name)
        .orElseThrow(() -> new FsException(Errno.ENOENT, "no '" + name + "' in " + dir));
    Attr found = getattr(e.ino());
    ctx.names.remember(e.ino(), dir, name);
    return found;
  }

  /** What must happen before a name is looked up in a directory (a recall of its delegation). */
  @FunctionalInterface
  interface BeforeDir {
    void check(long dir) throws FsException;
  }

  /** The path's inode, {@code before} run on each directory before a name is looked up in it. */
  Attr resolve(String path, BeforeDir before) throws FsException {
    if (!path.startsWith("/")) {
      throw new FsException(Errno.EINVAL, "not an absolute path: " + path);
    }
    Attr at = getattr(Vfs.ROOT);
    for (String part : path.split("/")) {
      if (!part.isEmpty()) {
        before.check(at.ino());
        at = lookup(at.ino(), part);
      }
    }
    return at;
  }

  String readlink(long ino) throws FsException {
    Inode i = inode(ino);
    if (i.type() != Attr.S_IFLNK || i.target() == null) {
      throw new FsException(Errno.EINVAL, "inode " + ino + " is not a symlink");
    }
    return i.target();
  }

  static void checkTarget(String target) throws FsException {
    if (target.isEmpty() || target.indexOf('\0') >= 0) {
      throw new FsException(Errno.EINVAL, "bad symlink target");
    }
    if (target.length() > MAX_SYMLINK) {
      throw new FsException(Errno.ENAMETOOLONG, "symlink target too long");
    }
  }

  /** The end of a directory's entry range. */
  byte[] direntEnd(long dir) {
    return Keys.prefixEnd(ctx.keys.direntPrefix(dir));
  }
}

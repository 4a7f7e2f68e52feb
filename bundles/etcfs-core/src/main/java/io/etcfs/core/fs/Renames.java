package io.etcfs.core.fs;

import io.etcfs.core.fs.meta.Codec;
import io.etcfs.core.fs.meta.Inode;
import io.etcfs.core.fs.meta.NameHash;
import io.etcfs.core.fs.tx.MetaTx;
import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.Vfs;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * rename(2) as one transaction: the new entry appears, the old one and any replaced target go,
 * and both parents' link counts move with a directory, all at one revision.
 */
final class Renames {
  private static final int MAX_DEPTH = 4096;
  private final Ctx ctx;
  private final Creates creates;
  private final Removes removes;

  Renames(Ctx ctx, Creates creates, Removes removes) {
    this.ctx = ctx;
    this.creates = creates;
    this.removes = removes;
  }

  void rename(long fromDir, String from, long toDir, String to, Caller caller)
      throws FsException {
    for (String n : new String[] {from, to}) {
      Names.check(n);
      if (n.equals(".") || n.equals("..")) {
        throw new FsException(Errno.EINVAL, "rename of '" + n + "'");
      }
    }
    long moved = ctx.tx.run("rename " + from + " to " + to,
        tx -> renameIn(tx, fromDir, from, toDir, to, caller));
    ctx.names.remember(moved, toDir, to);
  }

  /** Returns the inode now under the new name. */
  private long renameIn(MetaTx tx, long fromDir, String from, long toDir, String to,
      Caller caller) throws FsException {
    Map<Long, Inode> dirs = new LinkedHashMap<>();
    dirs.put(fromDir, creates.parent(tx, fromDir, true));
    dirs.putIfAbsent(toDir, creates.parent(tx, toDir, true));
    Map<Long, Inode> before = Map.copyOf(dirs);
    byte[] srcKey = ctx.keys.dirent(fromDir, NameHash.of(from), from);
    Codec.Dirent se = Records.dirent(tx.get(srcKey).orElseThrow(
        () -> new FsException(Errno.ENOENT, "no '" + from + "' in " + fromDir)));
    byte[] dstKey = ctx.keys.dirent(toDir, NameHash.of(to), to);
    Optional<Codec.Dirent> te = tx.get(dstKey).isPresent()
        ? Optional.of(Records.dirent(tx.get(dstKey).get())) : Optional.empty();
    if (te.isPresent() && te.get().ino() == se.ino()) {
      return se.ino(); // both names are links to one inode: POSIX says do nothing
    }
    Inode src = Records.inode(tx.get(ctx.keys.inode(se.ino())), se.ino());
    Names.checkSticky(dirs.get(fromDir), src, caller);
    if (src.isDir() && fromDir != toDir) {
      checkNotAncestor(tx, src.ino(), toDir);
    }
    long now = Ctx.now();
    if (te.isPresent()) {
      replaceTarget(tx, dirs, toDir, src, te.get(), caller, now);
    }
    if (src.isDir() && fromDir != toDir) {
      adjust(dirs, fromDir, -1);
      adjust(dirs, toDir, +1);
      src = src.withParent(toDir);
    }
    tx.delete(srcKey);
    tx.put(dstKey, Codec.dirent(new Codec.Dirent(src.ino(), src.type())));
    if (src.isDir() || !beingWritten(tx, src.ino())) {
      tx.put(ctx.keys.inode(src.ino()), Codec.inode(src.withCtime(now)));
    }
    for (Map.Entry<Long, Inode> d : dirs.entrySet()) {
      if (!d.getValue().equals(before.get(d.getKey()))) {
        tx.put(ctx.keys.inode(d.getKey()), Codec.inode(d.getValue().withCtime(now)));
      }
      creates.touchDir(tx, d.getKey(), now);
    }
    return src.ino();
  }

  /**
   * Whether a holder of {@code ino}'s exclusive lock, here or elsewhere, may have changes of it
   * not committed yet (its fence is dirty). A rename then leaves the file's inode record alone:
   * the holder's next commit sets its ctime later than the rename's, and the holder's commits,
   * which read and compare that record, are not overtaken by renames of the file. Rewriting it
   * here made a commit at close lose to a loop of renames every time, give up after its
   * attempts, and drop what close had acknowledged. POSIX leaves it to the implementation
   * whether a rename marks the renamed file's ctime at all; a directory's record is written
   * regardless (its parent may change, and nobody buffers a directory's data).
   */
  private boolean beingWritten(MetaTx tx, long ino) throws FsException {
    return tx.get(ctx.keys.inodeFence(ino))
        .map(kv -> io.etcfs.spi.fs.InodeFence.decode(kv.value()))
        .map(f -> !f.clean())
        .orElse(false);
  }

  private void replaceTarget(MetaTx tx, Map<Long, Inode> dirs, long toDir, Inode src,
      Codec.Dirent te, Caller caller, long now) throws FsException {
    Inode target = Records.inode(tx.get(ctx.keys.inode(te.ino())), te.ino());
    Names.checkSticky(dirs.get(toDir), target, caller);
    if (src.isDir() && !target.isDir()) {
      throw new FsException(Errno.ENOTDIR, "cannot replace non-directory " + te.ino());
    }
    if (!src.isDir() && target.isDir()) {
      throw new FsException(Errno.EISDIR, "cannot replace directory " + te.ino());
    }
    if (target.isDir()) {
      removes.requireEmpty(tx, target.ino());
      removes.removeDir(tx, target.ino());
      adjust(dirs, toDir, -1);
    } else {
      removes.dropLink(tx, target, now);
    }
  }

  /** A directory moved under itself would cut its subtree off the tree: EINVAL. */
  private void checkNotAncestor(MetaTx tx, long moved, long toDir) throws FsException {
    long p = toDir;
    for (int depth = 0; depth < MAX_DEPTH; depth++) {
      if (p == moved) {
        throw new FsException(Errno.EINVAL, "cannot move " + moved + " into its own subtree");
      }
      if (p == Vfs.ROOT) {
        return;
      }
      // read under compare: a concurrent rename of an ancestor makes this commit retry
      p = Records.inode(tx.get(ctx.keys.inode(p)), p).parent();
    }
    throw new FsException(Errno.ELOOP, "directory tree deeper than " + MAX_DEPTH);
  }

  private static void adjust(Map<Long, Inode> dirs, long dir, int delta) {
    Inode d = dirs.get(dir);
    dirs.put(dir, d.withNlink(d.nlink() + delta));
  }
}

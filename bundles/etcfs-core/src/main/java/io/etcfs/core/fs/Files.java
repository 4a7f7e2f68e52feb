package io.etcfs.core.fs;

import io.etcfs.core.fs.meta.Inode;
import io.etcfs.spi.vfs.Attr;
import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.OpenFile;
import java.util.logging.Logger;

/** open, create and the last close of files on this node. */
final class Files {
  private static final Logger LOG = Logger.getLogger(Files.class.getName());

  private final Ctx ctx;
  private final Lookups lookups;
  private final Creates creates;
  private final OpenFiles open;
  private final DataPath data;
  private final Flusher flusher;
  private final Truncator truncator;
  private final Purger purger;
  private final MemoryBudget budget;
  private final AttrChanges attrs;

  Files(Ctx ctx, Lookups lookups, Creates creates, OpenFiles open, DataPath data,
      Flusher flusher, Truncator truncator, Purger purger, MemoryBudget budget,
      AttrChanges attrs) {
    this.ctx = ctx;
    this.lookups = lookups;
    this.creates = creates;
    this.open = open;
    this.data = data;
    this.flusher = flusher;
    this.truncator = truncator;
    this.purger = purger;
    this.budget = budget;
    this.attrs = attrs;
  }

  DataPath data() {
    return data;
  }

  OpenFile open(long ino, int flags, Caller caller) throws FsException {
    return open(ino, flags, caller, true);
  }

  /**
   * @param settle whether to take the file's lock for reading first (see {@link
   *     DataPath#settle}); not for a file this node has just created, which no other node can
   *     have written and whose create took the exclusive lock where the backend can
   */
  private OpenFile open(long ino, int flags, Caller caller, boolean settle) throws FsException {
    Inode i = lookups.inode(ino);
    boolean writes = (flags & Handle.O_ACCMODE) != Handle.O_RDONLY;
    if (i.isDir() && writes) {
      throw new FsException(Errno.EISDIR, "open of directory " + ino + " for writing");
    }
    if (i.type() == Attr.S_IFLNK) {
      throw new FsException(Errno.ELOOP, "open of symlink " + ino);
    }
    FileData f = open.acquire(ino);
    try {
      boolean truncates = writes && (flags & Handle.O_TRUNC) != 0 && i.isRegular();
      if (truncates) {
        truncator.truncate(ino, 0); // under the exclusive lock, which settles the file too
        attrs.afterDataChange(ino, caller);
      } else if (settle && i.isRegular()) {
        data.settle(ino);
      }
    } catch (FsException | RuntimeException e) {
      release(f);
      throw e;
    }
    return new Handle(ctx, this, f, flags, caller);
  }

  OpenFile create(long dir, String name, int mode, int flags, Caller caller) throws FsException {
    try {
      Attr a = creates.createFile(dir, name, mode, caller);
      return open(a.ino(), flags & ~Handle.O_TRUNC, caller, false);
    } catch (FsException e) {
      if (e.errno() != Errno.EEXIST || (flags & Handle.O_EXCL) != 0) {
        throw e;
      }
    }
    return open(lookups.lookup(dir, name).ino(), flags, caller);
  }

  /** Before a write by {@code caller}: the set-ID bits it must take away (see SetIds). */
  void beforeWrite(FileData f, Caller caller) throws FsException {
    attrs.afterDataChange(f.ino, caller);
  }

  /** Commits what this node buffered for {@code ino}, if it has the file open. */
  void commitBuffered(long ino) throws FsException {
    FileData f = open.get(ino);
    if (f != null) {
      flush(f, false);
    }
  }

  /**
   * A file's attributes as this node's callers must see them: writes buffered here and not
   * committed yet already count for its size and modification time (POSIX: a stat after a
   * write shows it). Other nodes see them once committed (at the latest on close or recall).
   */
  Attr withBuffered(Attr a) {
    FileData f = open.get(a.ino());
    if (f == null) {
      return a;
    }
    long end = f.pendingEnd;
    long written = f.writtenNs;
    // with nothing buffered the committed times stand, an explicit utimens included
    if (end < 0 || end <= a.size() && written <= a.mtimeNs()) {
      return a;
    }
    return new Attr(a.ino(), a.mode(), a.nlink(), a.uid(), a.gid(), a.rdev(),
        Math.max(a.size(), end), a.blocks(), a.atimeNs(), Math.max(a.mtimeNs(), written),
        Math.max(a.ctimeNs(), written));
  }

  /** Commits what {@code f} buffered; {@code declareClean} at a close (see Flusher). */
  void flush(FileData f, boolean declareClean) throws FsException {
    f.lock.lock();
    try {
      flusher.flush(f, declareClean);
    } finally {
      f.lock.unlock();
    }
  }

  /** The last close here of an unlinked file frees it. */
  void release(FileData f) throws FsException {
    FsException failure = null;
    try {
      flush(f, true);
    } catch (FsException e) {
      failure = e;
    }
    if (open.release(f)) {
      dropBuffer(f);
      Inode i;
      try {
        i = lookups.inode(f.ino);
      } catch (FsException e) {
        i = null;
      }
      if (i != null && i.nlink() == 0) {
        purger.purge(f.ino);
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  /** What a failed last flush could not commit is lost with the handle: give its memory back. */
  private void dropBuffer(FileData f) {
    f.lock.lock();
    try {
      if (!f.dirty.isEmpty()) {
        LOG.warning("inode " + f.ino + ": " + f.dirty.size() + " uncommitted blocks dropped at close");
        flusher.drop(f);
      }
    } finally {
      f.lock.unlock();
    }
  }
}

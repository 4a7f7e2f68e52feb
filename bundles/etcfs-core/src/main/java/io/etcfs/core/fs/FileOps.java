package io.etcfs.core.fs;

import io.etcfs.core.fs.meta.Inode;
import io.etcfs.spi.lock.HeldLock;
import io.etcfs.spi.vfs.Attr;
import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.OpenFile;
import io.etcfs.spi.vfs.SetAttr;
import io.etcfs.support.collect.BoundedMaps;
import java.util.Map;
import java.util.logging.Logger;

/** open, create and the last close of files on this node. */
final class FileOps {
  private static final Logger LOG = Logger.getLogger(FileOps.class.getName());

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
  private final InodeLocks locks;
  /** Set once, after construction (it needs this). */
  private Delegations delegations;

  FileOps(Ctx ctx, Lookups lookups, Creates creates, OpenFiles open, DataPath data,
      Flusher flusher, Truncator truncator, Purger purger, MemoryBudget budget,
      AttrChanges attrs, InodeLocks locks) {
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
    this.locks = locks;
    ctx.releasing.openOrphansFrom(this::openOrphans);
  }

  /** The files open here that have no name left: each goes, its blocks freed, at its last close. */
  private java.util.Set<Long> openOrphans() {
    java.util.Set<Long> orphans = new java.util.HashSet<>();
    for (long ino : open.inodes()) {
      try {
        if (lookups.inode(ino).nlink() == 0) {
          orphans.add(ino);
        }
      } catch (FsException e) {
        // gone already (purged): nothing to wait for
      }
    }
    return orphans;
  }

  DataPath data() {
    return data;
  }

  void setDelegations(Delegations delegations) {
    this.delegations = delegations;
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

  /** Opens a file this node has just created (nothing to truncate, nobody else wrote it). */
  OpenFile openCreated(long ino, int flags, Caller caller) throws FsException {
    return open(ino, flags & ~Handle.O_TRUNC, caller, false);
  }

  OpenFile create(long dir, String name, int mode, int flags, Caller caller) throws FsException {
    try {
      Attr a = creates.createFile(dir, name, mode, caller);
      return openCreated(a.ino(), flags, caller);
    } catch (FsException e) {
      if (e.errno() != Errno.EEXIST || (flags & Handle.O_EXCL) != 0) {
        throw e;
      }
    }
    return open(lookups.lookup(dir, name).ino(), flags, caller);
  }

  /** Before a write by {@code caller}: the set-ID bits it must take away (see SetIds). */
  void beforeWrite(FileData f, Caller caller) throws FsException {
    if (caller.isRoot()) {
      return;
    }
    f.lock.lock();
    try {
      PendingAttrs pending = f.pendingAttrs;
      if (pending != null) {
        // the mode to go by is the buffered one, and it is committed with the write
        Inode view = pending.applyTo(lookups.inode(f.ino));
        if (SetIds.dataChangeDrops(view, caller)) {
          f.pendingAttrs = pending.withMode(SetIds.afterDataChange(view, caller), Ctx.now());
        }
        return;
      }
    } finally {
      f.lock.unlock();
    }
    // the look-up sees a file whose create is queued here too (it has no set-ID bits)
    if (SetIds.dataChangeDrops(lookups.inode(f.ino), caller)) {
      attrs.afterDataChange(f.ino, caller);
    }
  }

  /**
   * chmod, chown and utimens of a regular file this node has open and holds exclusively:
   * buffered with its data ({@link PendingAttrs}) and committed with it, no round trip here.
   *
   * @return the attributes after the change, or null where it cannot be buffered (no such
   *     lock, the file not open here, a size change too): the caller commits it at once
   */
  Attr setattrBuffered(long ino, SetAttr c, Caller caller) throws FsException {
    FileData f = open.get(ino);
    HeldLock lock = locks.heldExclusive(ino);
    if (f == null || lock == null || c.size() != null) {
      return null;
    }
    f.lock.lock();
    try {
      Inode committed = lookups.inode(ino);
      // dirty(): a close may have declared the lock clean; other nodes must recall it again
      if (open.get(ino) != f || !committed.isRegular() || !locks.isCurrent(ino, lock)
          || !locks.dirty(lock)) {
        return null;
      }
      PendingAttrs before = f.pendingAttrs;
      Inode view = before == null ? committed : before.applyTo(committed);
      Inode done = AttrChanges.changed(view, c, caller, Ctx.now());
      f.pendingAttrs = PendingAttrs.after(done, c, before);
    } finally {
      f.lock.unlock();
    }
    return attributes(ino);
  }

  /** Commits what this node buffered for {@code ino}, if it has the file open. */
  void commitBuffered(long ino) throws FsException {
    FileData f = open.get(ino);
    if (f != null) {
      flush(f, false);
    }
  }

  /** {@code ino}'s attributes as this node's callers must see them, read now. */
  Attr attributes(long ino) throws FsException {
    long since = ctx.settles.get();
    return attributes(lookups.getattr(ino), since);
  }

  /**
   * {@link #withBuffered} of {@code cached}, read after {@code since} ({@link Ctx#settles}),
   * read again if something buffered here was committed meanwhile: a committed value from
   * before that commit never goes out without the buffered one the commit cleared (a chown
   * buffered at a queued create and committed around a stat once came back as the file's first
   * owner, and the kernel refused its new owner a write).
   */
  Attr attributes(Attr cached, long since) throws FsException {
    Attr a = cached;
    while (true) {
      Attr answer = withBuffered(a);
      if (ctx.settles.get() == since) {
        return answer;
      }
      since = ctx.settles.get();
      a = lookups.getattr(a.ino());
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
    PendingAttrs pending = f.pendingAttrs;
    long end = f.pendingEnd;
    long written = f.writtenNs;
    // with nothing buffered the committed times stand, an explicit utimens included
    if (end >= 0 && (end > a.size() || written > a.mtimeNs())) {
      a = new Attr(a.ino(), a.mode(), a.nlink(), a.uid(), a.gid(), a.rdev(),
          Math.max(a.size(), end), a.blocks(), a.atimeNs(), Math.max(a.mtimeNs(), written),
          Math.max(a.ctimeNs(), written));
    }
    if (pending == null) {
      return a;
    }
    return new Attr(a.ino(), pending.mode(), a.nlink(), pending.uid(), pending.gid(), a.rdev(),
        a.size(), a.blocks(), pending.atimeNs() != null ? pending.atimeNs() : a.atimeNs(),
        pending.mtimeNs() != null ? pending.mtimeNs() : a.mtimeNs(),
        Math.max(a.ctimeNs(), pending.ctimeNs()));
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

  /**
   * Commits at a release that failed, by inode (the most recent 1024), until a close or fsync
   * of the file on this node reports one, as Linux reports a failed write-back to the next
   * fsync. Nobody else waits for a release: a close has returned long before.
   */
  private final Map<Long, FsException> failedReleases = BoundedMaps.synchronizedOf(1024, false);

  /** At a close or fsync: the failure of an earlier release's commit of the file, once. */
  void reportFailedRelease(FileData f) throws FsException {
    FsException e = failedReleases.remove(f.ino);
    if (e != null) {
      throw new FsException(e.errno(), "an earlier close's commit of inode " + f.ino
          + " failed: " + e.getMessage(), e);
    }
  }

  /**
   * The last close of a description: commits what is buffered and declares the lock clean
   * (see Flusher); the last close here of an unlinked file frees it.
   */
  void release(FileData f) throws FsException {
    ctx.releasing.begin(f.ino);
    boolean deferred = false;
    try {
      deferred = deferToCreate(f);
      if (!deferred) {
        releaseCounted(f);
      }
    } finally {
      if (!deferred) {
        ctx.releasing.end(f.ino);
      }
    }
  }

  /**
   * The last close of a file whose create is still queued here (directory delegation): what it
   * buffered goes to the device now, and the create carries it — data, size and attributes in
   * the one transaction that makes the file ({@link Delegations#carry}); the release ends when
   * that commits ({@link #finishDeferred}). Nobody waits for a release (close(2) has returned),
   * and whatever needs the file committed (another open, fsync, a look-up elsewhere, statfs)
   * has the queue commit first. False where it cannot: the release goes the usual way.
   */
  private boolean deferToCreate(FileData f) {
    Delegations d = delegations;
    if (d == null || !d.createQueued(f.ino)) {
      return false;
    }
    f.lock.lock();
    try {
      return open.isLast(f) && flusher.writeAheadForCreate(f) && d.carry(f);
    } catch (FsException | RuntimeException e) {
      // nothing lost: the blocks stay buffered, and the usual release commits or reports them
      LOG.fine("inode " + f.ino + ": release not carried by its create: " + e.getMessage());
      return false;
    } finally {
      f.lock.unlock();
    }
  }

  /**
   * The end of a release {@link #deferToCreate} left to the create, once that was committed (or
   * lost): whatever it did not carry is committed now, and the file is let go here.
   */
  void finishDeferred(FileData f) {
    try {
      releaseCounted(f);
    } catch (FsException e) {
      // logged, and reported at the next close or fsync of the file here (releaseCounted)
    } finally {
      ctx.releasing.end(f.ino);
    }
  }

  private void releaseCounted(FileData f) throws FsException {
    FsException failure = null;
    boolean last;
    // Under the file's lock from the commit to the forgetting: a chmod another process makes
    // by path meanwhile (the file still looks open here) is buffered before the commit, or
    // finds the file forgotten and commits itself; never buffered into a file that is going.
    f.lock.lock();
    try {
      try {
        flush(f, true);
      } catch (FsException e) {
        failure = e;
        failedReleases.put(f.ino, e);
        LOG.warning("inode " + f.ino + ": commit at release failed: " + e.getMessage()
            + " (reported at the next close or fsync of the file here)");
      }
      last = open.release(f);
    } finally {
      f.lock.unlock();
    }
    if (last) {
      dropBuffer(f);
      // its unlink committed while it was open here, or this node's cache shows it unlinked
      boolean purge = open.purgeAtRelease(f.ino);
      if (!purge) {
        try {
          purge = lookups.inode(f.ino).nlink() == 0;
        } catch (FsException e) {
          purge = false;
        }
      }
      if (purge) {
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
      if (f.hasBuffered()) {
        LOG.warning("inode " + f.ino + ": " + f.dirty.size() + " buffered and "
            + f.written.values().stream().mapToLong(p -> p.dev().length()).sum()
            + " written-ahead uncommitted blocks and attribute changes dropped at close");
        flusher.drop(f);
      }
    } finally {
      f.lock.unlock();
    }
  }
}

package io.etcfs.fuse3.internal;

import io.etcfs.fuse.common.DirHandle;
import io.etcfs.fuse.common.Handles;
import io.etcfs.fuse.common.LockRanges;
import io.etcfs.fuse.common.ProcGroups;
import io.etcfs.spi.meta.NoWait;
import io.etcfs.spi.vfs.Attr;
import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.OpenFile;
import io.etcfs.spi.vfs.PosixLock;
import io.etcfs.spi.vfs.SetAttr;
import io.etcfs.spi.vfs.Vfs;
import io.etcfs.support.collect.BoundedMaps;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * The low-level operations: each callback reads what it needs out of the request (names, the
 * caller, the file handle; write data is copied) on libfuse's thread, hands the work to
 * {@link Requests}, and returns; the worker that finishes it sends the reply. Inodes are etcfs's
 * own numbers (FUSE_ROOT_ID 1 is {@link Vfs#ROOT}): no path is ever resolved.
 *
 * <p>Lookup counts: the core keeps an inode while it has a name or an open file, whatever the
 * kernel remembers, so {@code forget} needs no bookkeeping; a kernel that asks for an inode
 * that is gone gets ENOENT, as it would from any network filesystem.
 */
final class LowLevelOps {
  /** setattr's to_set bits (fuse_lowlevel.h). */
  static final int SET_MODE = 1;
  static final int SET_UID = 1 << 1;
  static final int SET_GID = 1 << 2;
  static final int SET_SIZE = 1 << 3;
  static final int SET_ATIME = 1 << 4;
  static final int SET_MTIME = 1 << 5;
  static final int SET_ATIME_NOW = 1 << 7;
  static final int SET_MTIME_NOW = 1 << 8;

  private final Vfs vfs;
  private final Libfuse3 lib;
  private final Requests requests;
  private final CacheSettings cache;
  private final Handles handles = new Handles();
  /** Pages cached under no grant this node can name: dropped at the next check. */
  private static final long STALE = -1;
  /** lseek's whence values the kernel passes on (it does SEEK_SET, CUR and END itself). */
  static final int SEEK_DATA = 3;
  static final int SEEK_HOLE = 4;
  /** What copy_file_range moves at a time. */
  private static final int COPY_CHUNK = 1 << 20;
  /** Per inode, the grant the kernel's cached pages were made under (absent: none cached). */
  private final Map<Long, Long> pages = new java.util.concurrent.ConcurrentHashMap<>();
  private volatile KernelNotifier notifier;
  /** Each directory's parent as last seen by name, for readdir's "..": display only. */
  private final Map<Long, Long> parents = BoundedMaps.synchronizedOf(8192, true);

  LowLevelOps(Vfs vfs, Libfuse3 lib, Requests requests, CacheSettings cache) {
    this.vfs = vfs;
    this.lib = lib;
    this.requests = requests;
    this.cache = cache;
  }

  int openFiles() {
    return handles.openFiles();
  }

  /** Files the kernel never released (the mount went away under them). */
  List<OpenFile> drainFiles() {
    return handles.drainFiles();
  }

  /** Registers every operation etcfs implements; the rest stay NULL (libfuse answers ENOSYS). */
  void register(Callbacks.Table t, Callbacks.Init init) {
    t.set(Callbacks.INIT, Callbacks.Init.class, init);
    t.set(Callbacks.LOOKUP, Callbacks.ReqInoPtr.class, this::lookup);
    t.set(Callbacks.FORGET, Callbacks.ReqInoLong.class, (req, ino, n) -> lib.fuse_reply_none(req));
    t.set(Callbacks.FORGET_MULTI, Callbacks.ReqInoLong.class,
        (req, count, array) -> lib.fuse_reply_none(req));
    t.set(Callbacks.GETATTR, Callbacks.ReqInoPtr.class, this::getattr);
    t.set(Callbacks.SETATTR, Callbacks.Setattr.class, this::setattr);
    t.set(Callbacks.READLINK, Callbacks.ReqIno.class, this::readlink);
    t.set(Callbacks.MKNOD, Callbacks.Mknod.class, this::mknod);
    t.set(Callbacks.MKDIR, Callbacks.Mkdir.class, this::mkdir);
    t.set(Callbacks.UNLINK, Callbacks.ReqInoPtr.class, this::unlink);
    t.set(Callbacks.RMDIR, Callbacks.ReqInoPtr.class, this::rmdir);
    t.set(Callbacks.SYMLINK, Callbacks.Symlink.class, this::symlink);
    t.set(Callbacks.RENAME, Callbacks.Rename.class, this::rename);
    t.set(Callbacks.LINK, Callbacks.Link.class, this::link);
    t.set(Callbacks.OPEN, Callbacks.ReqInoPtr.class, this::open);
    t.set(Callbacks.READ, Callbacks.Read.class, this::read);
    t.set(Callbacks.WRITE, Callbacks.Write.class, this::write);
    t.set(Callbacks.FLUSH, Callbacks.ReqInoPtr.class, this::flush);
    t.set(Callbacks.RELEASE, Callbacks.ReqInoPtr.class, this::release);
    t.set(Callbacks.FSYNC, Callbacks.Fsync.class, this::fsync);
    t.set(Callbacks.OPENDIR, Callbacks.ReqInoPtr.class, this::opendir);
    t.set(Callbacks.READDIR, Callbacks.Read.class,
        (req, ino, size, off, fi) -> readdir(req, size, off, fi, false));
    if (cache.readdirplus()) {
      t.set(Callbacks.READDIRPLUS, Callbacks.Read.class,
          (req, ino, size, off, fi) -> readdir(req, size, off, fi, true));
    }
    t.set(Callbacks.RELEASEDIR, Callbacks.ReqInoPtr.class, this::releasedir);
    // directory changes are committed to etcd when they are made: nothing is left to sync
    t.set(Callbacks.FSYNCDIR, Callbacks.Fsync.class, (req, ino, d, fi) -> lib.fuse_reply_err(req, 0));
    t.set(Callbacks.STATFS, Callbacks.ReqIno.class, this::statfs);
    t.set(Callbacks.SETXATTR, Callbacks.Setxattr.class, this::setxattr);
    t.set(Callbacks.GETXATTR, Callbacks.Getxattr.class, this::getxattr);
    t.set(Callbacks.LISTXATTR, Callbacks.ReqInoLong.class, this::listxattr);
    t.set(Callbacks.REMOVEXATTR, Callbacks.ReqInoPtr.class, this::removexattr);
    t.set(Callbacks.ACCESS, Callbacks.Access.class, this::access);
    t.set(Callbacks.CREATE, Callbacks.Create.class, this::create);
    t.set(Callbacks.GETLK, Callbacks.Getlk.class, this::getlk);
    t.set(Callbacks.SETLK, Callbacks.Setlk.class, this::setlk);
    t.set(Callbacks.FLOCK, Callbacks.Flock.class, this::flock);
    t.set(Callbacks.COPY_FILE_RANGE, Callbacks.CopyFileRange.class, this::copyFileRange);
    t.set(Callbacks.LSEEK, Callbacks.Lseek.class, this::lseek);
    t.set(Callbacks.FALLOCATE, Callbacks.Fallocate.class, this::fallocate);
  }

  // ---- the kernel's caches (docs/ARCHITECTURE.md, "Kernel caches")

  void setNotifier(KernelNotifier notifier) {
    this.notifier = notifier;
  }

  /**
   * How long the kernel may keep these attributes: a file's only where the core says it may
   * ({@code kept}: under this node's lock, or with nobody writing it elsewhere — the core drops
   * them before the lock goes or as a writer comes), a directory's or symlink's for the
   * configured time (the metadata watch drops them when another node changes them).
   */
  private double attrSeconds(Attr a, boolean kept) {
    if (a.isRegular()) {
      return kept ? cache.attrSeconds() : 0;
    }
    return cache.dirAttrSeconds();
  }

  /** Whether a file's attributes may be kept now ({@link Vfs#attributesCacheable}). */
  private boolean keepable(Attr a) {
    return a.isRegular() && vfs.attributesCacheable(a.ino());
  }

  /**
   * After a reply that let the kernel keep a file's attributes: if the core's attributes epoch
   * moved since {@code epoch} (read before the attributes were computed), an invalidation may
   * have reached the kernel before this reply did, and the attributes are dropped again (see
   * {@link KernelNotifier#attributesAgain}).
   */
  private void recheck(Attr a, boolean kept, long epoch) {
    KernelNotifier n = notifier;
    if (kept && n != null && cache.attrSeconds() > 0 && vfs.attributesEpoch() != epoch) {
      n.attributesAgain(a.ino(), cache.attrSeconds());
    }
  }

  /** An entry reply for attributes computed after {@code epoch} was read. */
  private void entry(long req, Attr a, long epoch) {
    boolean kept = keepable(a);
    requests.replyEntry(req, a, attrSeconds(a, kept), cache.entrySeconds());
    recheck(a, kept, epoch);
  }

  /** An attributes reply for attributes computed after {@code epoch} was read. */
  private void attr(long req, Attr a, long epoch) {
    boolean kept = keepable(a);
    requests.replyAttr(req, a, attrSeconds(a, kept));
    recheck(a, kept, epoch);
  }

  /**
   * After a read or write served with the page cache on: the pages the kernel now holds were
   * made under the grant held before and after the call, if it was the same; else under none
   * this node can name (they are dropped at the next check).
   */
  private void cachedUnder(long ino, long before) {
    if (!cache.pageCache()) {
      return;
    }
    long after = vfs.cacheGrant(ino);
    long grant = before != 0 && before == after ? after : STALE;
    pages.merge(ino, grant, (old, now) -> old == now ? old : STALE);
  }

  /**
   * Before a file's attributes are answered (every read() asks for them once they are dropped):
   * if the kernel may hold pages cached under another grant than the current one — another
   * node may have written in between — they are dropped first. Runs on a request's worker,
   * holding nothing a read in flight needs, so the pages those reads hold are released.
   *
   * @return the current grant
   */
  private long pagesCheck(long ino) {
    long grant = vfs.cacheGrant(ino);
    Long stale = pagesToDrop(ino, grant);
    KernelNotifier n = notifier;
    if (stale != null && n != null) {
      NoWait.check(); // the kernel may wait for reads in flight to drop their pages
      n.pages(ino);
      pages.remove(ino, stale);
    }
    return grant;
  }

  /**
   * The grant the kernel's pages of {@code ino} were cached under, if {@link #pagesCheck} must
   * drop them before answering under {@code grant}; null if nothing is to be dropped.
   */
  private Long pagesToDrop(long ino, long grant) {
    Long cachedUnder = pages.get(ino);
    return cachedUnder != null && cachedUnder != grant && notifier != null ? cachedUnder : null;
  }

  /**
   * An open keeps the kernel's cached pages only if they were made under the grant this node
   * holds now; otherwise the kernel drops them itself as the file opens.
   */
  private int openBits(long ino) {
    if (!cache.pageCache()) {
      return Mem.FI_DIRECT_IO;
    }
    long grant = vfs.cacheGrant(ino);
    Long cachedUnder = pages.get(ino);
    if (grant != 0 && cachedUnder != null && cachedUnder == grant) {
      return Mem.FI_KEEP_CACHE;
    }
    if (cachedUnder != null) {
      pages.remove(ino, cachedUnder);
    }
    return 0;
  }

  // ---- the request's caller

  private Caller caller(long req) {
    long ctx = lib.fuse_req_ctx(req);
    int uid = Mem.IO.getInt(ctx);
    int gid = Mem.IO.getInt(ctx + 4);
    int pid = Mem.IO.getInt(ctx + 8);
    return Caller.withGroupsFrom(uid, gid, pid, () -> ProcGroups.of(pid));
  }

  // ---- names

  private void lookup(long req, long parent, long namePtr) {
    String name = Mem.string(namePtr);
    Caller caller = caller(req);
    requests.answer("lookup", req, () -> {
      long epoch = vfs.attributesEpoch();
      Attr a;
      try {
        a = vfs.lookup(parent, name, caller);
      } catch (FsException e) {
        if (e.errno() == Errno.ENOENT && cache.negativeSeconds() > 0) {
          requests.replyNegative(req, cache.negativeSeconds());
          return;
        }
        throw e;
      }
      rememberParent(a, parent);
      entry(req, a, epoch);
    });
  }

  private void rememberParent(Attr a, long parent) {
    if (a.isDirectory()) {
      parents.put(a.ino(), parent);
    }
  }

  private void getattr(long req, long ino, long fi) {
    requests.answer("getattr", req, () -> {
      if (NoWait.active() && pagesToDrop(ino, vfs.cacheGrant(ino)) != null) {
        NoWait.check(); // the page drop below would: hand over before doing the rest twice
      }
      long epoch = vfs.attributesEpoch();
      Attr a = vfs.getattr(ino);
      if (a.isRegular()) {
        pagesCheck(ino);
      }
      attr(req, a, epoch);
    });
  }

  private void setattr(long req, long ino, long st, int toSet, long fi) {
    Integer mode = (toSet & SET_MODE) != 0 ? Mem.IO.getInt(st + 24) : null;
    Integer uid = (toSet & SET_UID) != 0 ? Mem.IO.getInt(st + 28) : null;
    Integer gid = (toSet & SET_GID) != 0 ? Mem.IO.getInt(st + 32) : null;
    Long size = (toSet & SET_SIZE) != 0 ? Mem.IO.getLong(st + 48) : null;
    Long atime = (toSet & SET_ATIME_NOW) != 0 ? Long.valueOf(SetAttr.NOW)
        : (toSet & SET_ATIME) != 0 ? Long.valueOf(Mem.getTime(st + 72)) : null;
    Long mtime = (toSet & SET_MTIME_NOW) != 0 ? Long.valueOf(SetAttr.NOW)
        : (toSet & SET_MTIME) != 0 ? Long.valueOf(Mem.getTime(st + 88)) : null;
    SetAttr changes = new SetAttr(mode, uid, gid, size, atime, mtime);
    Caller caller = caller(req);
    requests.submit("setattr", req, () -> {
      long epoch = vfs.attributesEpoch();
      attr(req, vfs.setattr(ino, changes, caller), epoch);
    });
  }

  private void readlink(long req, long ino) {
    requests.answer("readlink", req, () -> requests.replyReadlink(req, vfs.readlink(ino)));
  }

  private void mknod(long req, long parent, long namePtr, int mode, long rdev) {
    String name = Mem.string(namePtr);
    Caller caller = caller(req);
    requests.submit("mknod", req, () -> {
      long epoch = vfs.attributesEpoch();
      entry(req, vfs.mknod(parent, name, mode, rdev, caller), epoch);
    });
  }

  private void mkdir(long req, long parent, long namePtr, int mode) {
    String name = Mem.string(namePtr);
    Caller caller = caller(req);
    requests.submit("mkdir", req, () -> {
      long epoch = vfs.attributesEpoch();
      Attr a = vfs.mkdir(parent, name, mode, caller);
      rememberParent(a, parent);
      entry(req, a, epoch);
    });
  }

  private void symlink(long req, long linkPtr, long parent, long namePtr) {
    String target = Mem.string(linkPtr);
    String name = Mem.string(namePtr);
    Caller caller = caller(req);
    requests.submit("symlink", req, () -> {
      long epoch = vfs.attributesEpoch();
      entry(req, vfs.symlink(parent, name, target, caller), epoch);
    });
  }

  private void link(long req, long ino, long newParent, long namePtr) {
    String name = Mem.string(namePtr);
    Caller caller = caller(req);
    requests.submit("link", req, () -> {
      long epoch = vfs.attributesEpoch();
      entry(req, vfs.link(ino, newParent, name, caller), epoch);
    });
  }

  private void unlink(long req, long parent, long namePtr) {
    String name = Mem.string(namePtr);
    Caller caller = caller(req);
    requests.submit("unlink", req, () -> {
      vfs.unlink(parent, name, caller);
      requests.replyOk(req);
    });
  }

  private void rmdir(long req, long parent, long namePtr) {
    String name = Mem.string(namePtr);
    Caller caller = caller(req);
    requests.submit("rmdir", req, () -> {
      vfs.rmdir(parent, name, caller);
      requests.replyOk(req);
    });
  }

  private void rename(long req, long parent, long namePtr, long newParent, long newNamePtr,
      int flags) {
    String name = Mem.string(namePtr);
    String newName = Mem.string(newNamePtr);
    Caller caller = caller(req);
    requests.submit("rename", req, () -> {
      if (flags != 0) {
        // RENAME_NOREPLACE / EXCHANGE / WHITEOUT: the core's rename has no flags yet; EINVAL
        // is what a filesystem without them answers, and mv falls back to a plain rename
        throw new FsException(Errno.EINVAL, "rename flags " + flags + " are not supported");
      }
      vfs.rename(parent, name, newParent, newName, caller);
      requests.replyOk(req);
    });
  }

  private void statfs(long req, long ino) {
    requests.submit("statfs", req, () -> requests.replyStatfs(req, vfs.statfs()));
  }

  /** default_permissions: the kernel checked the bits; only existence is left. */
  private void access(long req, long ino, int mask) {
    requests.submit("access", req, () -> {
      vfs.getattr(ino);
      requests.replyOk(req);
    });
  }

  // ---- open files

  private void open(long req, long ino, long fi) {
    int flags = Mem.IO.getInt(fi + Mem.FI_FLAGS);
    Caller caller = caller(req);
    requests.submit("open", req, () -> {
      OpenFile file = vfs.open(ino, flags, caller);
      int bits = openBits(ino);
      KernelNotifier n = notifier;
      if (cache.pageCache() && (bits & Mem.FI_KEEP_CACHE) == 0 && n != null) {
        // The open took the file's lock: the size the kernel was told by a lookup before it
        // may be older, and a kernel ends a read() at that size without asking (an attribute
        // timeout of 0 still holds for the rest of the jiffy). Dropped, the first read past it
        // asks getattr, which answers under the lock.
        n.attributes(ino);
      }
      requests.replyOpen(req, flags, handles.add(file), bits);
    });
  }

  private void create(long req, long parent, long namePtr, int mode, long fi) {
    String name = Mem.string(namePtr);
    int flags = Mem.IO.getInt(fi + Mem.FI_FLAGS);
    Caller caller = caller(req);
    requests.submit("create", req, () -> {
      long epoch = vfs.attributesEpoch();
      OpenFile file = vfs.create(parent, name, mode, flags, caller);
      long fh = handles.add(file);
      Attr a;
      try {
        a = vfs.getattr(file.ino());
      } catch (FsException | RuntimeException e) {
        handles.removeFile(fh).release();
        throw e;
      }
      pages.remove(a.ino());
      boolean kept = keepable(a);
      requests.replyCreate(req, a, attrSeconds(a, kept), cache.entrySeconds(),
          flags, fh, cache.pageCache() ? 0 : Mem.FI_DIRECT_IO);
      recheck(a, kept, epoch);
    });
  }

  private void read(long req, long ino, long size, long off, long fi) {
    long fh = Mem.IO.getLong(fi + Mem.FI_FH);
    requests.submit("read", req, () -> {
      OpenFile file = handles.file(fh);
      int length = (int) Math.min(size, Integer.MAX_VALUE);
      ByteBuffer dst = requests.readBuffer(length);
      long before = vfs.cacheGrant(ino);
      int n = file.read(dst, off);
      cachedUnder(ino, before);
      if (n < 0 || n > length) {
        throw new FsException(Errno.EIO, "read of inode " + ino + " returned " + n);
      }
      requests.replyBuf(req, Mem.address(dst), n);
    });
  }

  private void write(long req, long ino, long buf, long size, long off, long fi) {
    long fh = Mem.IO.getLong(fi + Mem.FI_FH);
    // the buffer is libfuse's, reused for its next request as soon as this callback returns
    ByteBuffer data = requests.copyIn(buf, (int) size);
    requests.submit("write", req, () -> {
      try {
        long before = vfs.cacheGrant(ino);
        int n = handles.file(fh).write(data, off);
        cachedUnder(ino, before);
        if (n < 0 || n > size) {
          throw new FsException(Errno.EIO, "write of inode " + ino + " returned " + n);
        }
        requests.replyWrite(req, n);
      } finally {
        requests.recycle(data);
      }
    });
  }

  /**
   * copy_file_range(2) within etcfs: the bytes go from one open file to the other inside the
   * node, a chunk at a time, instead of through the kernel as a READ and a WRITE per chunk. The
   * kernel has checked the ranges (same file: no overlap) and the open modes; what is copied
   * is read under the source's lock and written under the target's as any read and write.
   * Returns the bytes copied, fewer at the source's end.
   */
  private void copyFileRange(long req, long inoIn, long offIn, long fiIn, long inoOut,
      long offOut, long fiOut, long len, int flags) {
    long fhIn = Mem.IO.getLong(fiIn + Mem.FI_FH);
    long fhOut = Mem.IO.getLong(fiOut + Mem.FI_FH);
    requests.submit("copy_file_range", req, () -> {
      if (flags != 0) {
        throw new FsException(Errno.EINVAL, "copy_file_range flags " + flags);
      }
      OpenFile in = handles.file(fhIn);
      OpenFile out = handles.file(fhOut);
      long total = 0;
      long want = Math.min(len, Integer.MAX_VALUE);
      while (total < want) {
        int chunk = (int) Math.min(want - total, COPY_CHUNK);
        ByteBuffer buf = requests.readBuffer(chunk);
        long before = vfs.cacheGrant(inoIn);
        int n = in.read(buf, offIn + total);
        cachedUnder(inoIn, before);
        if (n <= 0) {
          break;
        }
        buf.limit(n).position(0);
        int w = out.write(buf, offOut + total);
        if (w != n) {
          throw new FsException(Errno.EIO, "copy into inode " + inoOut + " wrote " + w + " of "
              + n);
        }
        total += n;
      }
      // the kernel drops the target's pages in the copied range itself; the rest are as they were
      requests.replyWrite(req, (int) total);
    });
  }

  /**
   * lseek(2) with SEEK_DATA or SEEK_HOLE, answered from the file's extent map and buffer
   * ({@link OpenFile#seek}). Without it the kernel would answer from the size alone, the whole
   * file data, and cp and tar --sparse would read every hole as zeros. The kernel sends no other
   * whence, and moves the file position to the answer itself.
   */
  private void lseek(long req, long ino, long off, int whence, long fi) {
    long fh = Mem.IO.getLong(fi + Mem.FI_FH);
    requests.submit("lseek", req, () -> {
      if (whence != SEEK_DATA && whence != SEEK_HOLE) {
        throw new FsException(Errno.EINVAL, "lseek whence " + whence);
      }
      requests.replyLseek(req, handles.file(fh).seek(off, whence == SEEK_HOLE));
    });
  }

  /**
   * fallocate(2): punching a hole and preallocating ({@link OpenFile#fallocate}); other modes
   * answer EOPNOTSUPP (never ENOSYS, on which the kernel would stop asking for the mount's
   * lifetime). The kernel writes back and drops its own cached pages of a punched range itself.
   */
  private void fallocate(long req, long ino, int mode, long offset, long length, long fi) {
    long fh = Mem.IO.getLong(fi + Mem.FI_FH);
    requests.submit("fallocate", req, () -> {
      handles.file(fh).fallocate(mode, offset, length);
      requests.replyOk(req);
    });
  }

  /**
   * close() of one descriptor. The kernel keeps no record of cluster POSIX locks, so it does not
   * unlock them at close: as POSIX says, the closing process's locks on the file go here (one
   * map look-up for an owner without locks), then a failed commit of an earlier release is
   * reported (the commit itself is the release's). Answered on libfuse's thread unless the
   * owner holds locks: their unlock reads the lock table from etcd before it changes anything,
   * so it gives up there and a worker does it all.
   */
  private void flush(long req, long ino, long fi) {
    long fh = Mem.IO.getLong(fi + Mem.FI_FH);
    long owner = Mem.IO.getLong(fi + Mem.FI_LOCK_OWNER);
    requests.answer("flush", req, () -> {
      OpenFile file = handles.file(fh);
      vfs.setlk(file.ino(), owner, PosixLock.none(0, PosixLock.EOF), false, () -> false);
      file.flush();
      requests.replyOk(req);
    });
  }

  /** The last close; it also lets go of the description's flock lock when the kernel says so. */
  private void release(long req, long ino, long fi) {
    long fh = Mem.IO.getLong(fi + Mem.FI_FH);
    long owner = Mem.IO.getLong(fi + Mem.FI_LOCK_OWNER);
    boolean flockRelease = (Mem.IO.getInt(fi + Mem.FI_BITS) & Mem.FI_FLOCK_RELEASE) != 0;
    requests.submit("release", req, () -> {
      OpenFile file = handles.removeFile(fh);
      try {
        file.release();
      } finally {
        if (flockRelease) {
          vfs.flock(file.ino(), owner, Vfs.LOCK_UN, () -> false);
        }
      }
      requests.replyOk(req);
    });
  }

  private void fsync(long req, long ino, int datasync, long fi) {
    long fh = Mem.IO.getLong(fi + Mem.FI_FH);
    requests.submit("fsync", req, () -> {
      handles.file(fh).fsync(datasync != 0);
      requests.replyOk(req);
    });
  }

  // ---- locks

  private void getlk(long req, long ino, long fi, long fl) {
    long owner = Mem.IO.getLong(fi + Mem.FI_LOCK_OWNER);
    short type = Mem.IO.getShort(fl);
    short whence = Mem.IO.getShort(fl + 2);
    long start = Mem.IO.getLong(fl + 8);
    long len = Mem.IO.getLong(fl + 16);
    int pid = Mem.IO.getInt(fl + 24);
    requests.submit("getlk", req, () -> {
      PosixLock wanted = LockRanges.toLock(type, whence, start, len, pid);
      requests.replyLock(req, vfs.getlk(ino, owner, wanted));
    });
  }

  private void setlk(long req, long ino, long fi, long fl, int sleep) {
    long owner = Mem.IO.getLong(fi + Mem.FI_LOCK_OWNER);
    short type = Mem.IO.getShort(fl);
    short whence = Mem.IO.getShort(fl + 2);
    long start = Mem.IO.getLong(fl + 8);
    long len = Mem.IO.getLong(fl + 16);
    int pid = Mem.IO.getInt(fl + 24);
    BooleanSupplier interrupted = () -> lib.fuse_req_interrupted(req) != 0;
    requests.submit("setlk", req, () -> {
      PosixLock lock = LockRanges.toLock(type, whence, start, len, pid);
      vfs.setlk(ino, owner, lock, sleep != 0, interrupted);
      requests.replyOk(req);
    });
  }

  /** flock(2): the kernel passes LOCK_NB or-ed in for a request that must not wait. */
  private void flock(long req, long ino, long fi, int op) {
    long owner = Mem.IO.getLong(fi + Mem.FI_LOCK_OWNER);
    BooleanSupplier interrupted = () -> lib.fuse_req_interrupted(req) != 0;
    requests.submit("flock", req, () -> {
      vfs.flock(ino, owner, op, interrupted);
      requests.replyOk(req);
    });
  }

  // ---- directories

  private void opendir(long req, long ino, long fi) {
    int flags = Mem.IO.getInt(fi + Mem.FI_FLAGS);
    requests.answer("opendir", req, () -> {
      Attr dir = vfs.getattr(ino);
      if (!dir.isDirectory()) {
        throw new FsException(Errno.ENOTDIR, "not a directory: inode " + ino);
      }
      long parent = ino == Vfs.ROOT ? Vfs.ROOT : parents.getOrDefault(ino, Vfs.ROOT);
      requests.replyOpenDir(req, flags, handles.add(new DirHandle(ino, parent)));
    });
  }

  private void releasedir(long req, long ino, long fi) {
    long fh = Mem.IO.getLong(fi + Mem.FI_FH);
    requests.answer("releasedir", req, () -> {
      handles.removeDir(fh);
      requests.replyOk(req);
    });
  }

  /**
   * readdir and readdirplus in offset mode ({@link DirHandle#list}, the libfuse 2 front end's
   * offsets). readdirplus also hands the kernel each entry's attributes, which counts as a
   * lookup of that entry (not of "." and "..").
   */
  private void readdir(long req, long size, long offset, long fi, boolean plus) {
    long fh = Mem.IO.getLong(fi + Mem.FI_FH);
    Caller caller = plus ? caller(req) : null;
    // A listing the node holds is answered here; the handle's kept page is only a cache, so an
    // attempt given up half way (NoWait) leaves nothing the worker's second one could trip on.
    requests.answer(plus ? "readdirplus" : "readdir", req, () -> {
      DirHandle dir = handles.dir(fh);
      DirBuffer out = requests.dirBuffer((int) Math.min(size, 1 << 20), plus, cache);
      long epoch = vfs.attributesEpoch();
      java.util.List<Attr> kept = new java.util.ArrayList<>();
      dir.list(vfs, offset, (name, ino, type, next) -> {
        boolean entry = plus && !name.equals(".") && !name.equals("..");
        Attr attr = entry ? entryAttr(dir.ino, name, ino, type, caller) : typeOnly(ino, type);
        boolean keep = entry && keepable(attr);
        boolean added = out.add(name, ino, attr, entry && attr.nlink() >= 0,
            attrSeconds(attr, keep), next);
        if (added && keep) {
          kept.add(attr);
        }
        return added;
      });
      requests.replyBuf(req, out.address(), out.used());
      kept.forEach(a -> recheck(a, true, epoch));
    });
  }

  /** Attributes carrying only an inode number and a type (nlink -1: nothing for the kernel). */
  private static Attr typeOnly(long ino, int type) {
    return new Attr(ino, type & Attr.S_IFMT, -1, 0, 0, 0, 0, 0, 0, 0, 0);
  }

  /** An entry's attributes for readdirplus; one gone meanwhile is listed without them. */
  private Attr entryAttr(long dir, String name, long ino, int type, Caller caller) {
    try {
      Attr a = vfs.lookup(dir, name, caller);
      if (a.ino() == ino) {
        rememberParent(a, dir);
        return a;
      }
    } catch (FsException ignored) {
      // removed or replaced since the listing: no attributes, the kernel looks it up itself
    }
    return typeOnly(ino, type);
  }

  // ---- extended attributes

  private void setxattr(long req, long ino, long namePtr, long value, long size, int flags) {
    String name = Mem.string(namePtr);
    byte[] bytes = Mem.bytes(value, size);
    Caller caller = caller(req);
    requests.submit("setxattr", req, () -> {
      vfs.setxattr(ino, name, bytes, flags, caller);
      requests.replyOk(req);
    });
  }

  private void getxattr(long req, long ino, long namePtr, long size) {
    String name = Mem.string(namePtr);
    // every write() asks for security.capability first: answered from the cached set
    requests.answer("getxattr", req,
        () -> requests.replyXattr(req, vfs.getxattr(ino, name), size));
  }

  private void listxattr(long req, long ino, long size) {
    requests.answer("listxattr", req, () -> {
      ByteArrayOutputStream names = new ByteArrayOutputStream();
      for (String name : vfs.listxattr(ino)) {
        names.writeBytes(name.getBytes(StandardCharsets.UTF_8));
        names.write(0);
      }
      requests.replyXattr(req, names.toByteArray(), size);
    });
  }

  private void removexattr(long req, long ino, long namePtr) {
    String name = Mem.string(namePtr);
    Caller caller = caller(req);
    requests.submit("removexattr", req, () -> {
      vfs.removexattr(ino, name, caller);
      requests.replyOk(req);
    });
  }
}

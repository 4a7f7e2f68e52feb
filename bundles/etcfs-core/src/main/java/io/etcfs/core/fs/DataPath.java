package io.etcfs.core.fs;

import io.etcfs.core.fs.meta.ExtentMap;
import io.etcfs.core.fs.meta.FileExtent;
import io.etcfs.spi.lock.HeldLock;
import io.etcfs.spi.lock.LockMode;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * Reads and buffered writes of file data. Reads merge this node's buffer with the committed
 * extent map, streaming straight from the device into the caller's buffer; holes, unwritten and
 * never-mapped ranges read as zeros. Writes fill whole-block buffers (a partial block starts as
 * its committed content) that {@link Flusher} later writes to fresh blocks; blocks it wrote ahead
 * of their commit ({@code FileData.written}) are read from there until they are committed.
 */
final class DataPath {
  /** The largest file size (2 EiB): as on XFS and ext4 it bounds a file, not the device. */
  static final long MAX_FILE = Long.MAX_VALUE / 4;

  private final Ctx ctx;
  private final Extents extents;
  private final MemoryBudget budget;
  private final Flusher flusher;
  private final InodeLocks locks;

  private final Truncator truncator;

  DataPath(Ctx ctx, Extents extents, MemoryBudget budget, Flusher flusher, InodeLocks locks,
      Truncator truncator) {
    this.ctx = ctx;
    this.extents = extents;
    this.budget = budget;
    this.flusher = flusher;
    this.locks = locks;
    this.truncator = truncator;
  }

  /** The size this node sees: committed, or further if buffered writes reach past it. */
  long size(FileData f) throws FsException {
    return Math.max(extents.snapshot(f.ino).inode().size(), f.pendingEnd);
  }

  /**
   * At open: holds the file's lock for reading, unless this node holds a lock on it already (no
   * round trip then). The grant comes after every exclusive holder's write() that returned
   * before the open, recalled and committed, so the size and times answered from now on are
   * at least that new. A kernel with a page cache decides end-of-file from the size it was last
   * told — a read() beyond it never reaches etcfs — and lseek(SEEK_END) uses it too: without
   * this, an open on a node whose lock watch lags could be told a size from before another
   * node's write() and read short. A stat without an open answers from the lock watch instead
   * (no round trip: see InodeLocks#beforeAttributes).
   */
  void settle(long ino) throws FsException {
    locks.hold(ino, LockMode.SHARED);
  }

  /** Reads under a shared (or this node's exclusive) lock: nobody else has unflushed writes. */
  int read(FileData f, ByteBuffer dst, long off) throws FsException {
    return underReadLock(f, () -> readLocked(f, dst, off));
  }

  /** What runs under the file's lock and its local lock. */
  @FunctionalInterface
  private interface Locked<T> {
    T run() throws FsException;
  }

  /**
   * Runs {@code body} holding the file's lock for reading (shared, or this node's exclusive)
   * and its local lock; asks again if the lock was recalled between the two.
   */
  private <T> T underReadLock(FileData f, Locked<T> body) throws FsException {
    while (true) {
      HeldLock lock = locks.hold(f.ino, LockMode.SHARED);
      f.lock.lock();
      try {
        if (locks.isCurrent(f.ino, lock)) {
          return body.run();
        }
      } finally {
        f.lock.unlock();
      }
    }
  }

  private int readLocked(FileData f, ByteBuffer dst, long off) throws FsException {
    landIfMet(f, off, dst.remaining());
    Extents.Snapshot s = extents.snapshot(f.ino);
    long size = Math.max(s.inode().size(), f.pendingEnd);
    if (off >= size || !dst.hasRemaining()) {
      return 0;
    }
    int n = (int) Math.min(dst.remaining(), size - off);
    List<FileExtent> list = s.chunks().extents();
    long pos = off;
    while (pos < off + n) {
      pos += readRun(f, list, dst, pos, off + n);
    }
    return n;
  }

  private long readRun(FileData f, List<FileExtent> list, ByteBuffer dst, long pos, long end)
      throws FsException {
    long bs = ctx.blockSize;
    long blk = pos / bs;
    int in = (int) (pos % bs);
    byte[] d = f.dirty.get(blk);
    if (d != null) {
      int len = (int) Math.min(bs - in, end - pos);
      dst.put(d, in, len);
      return len;
    }
    Long nextDirty = f.dirty.higherKey(blk);
    long limit = nextDirty == null ? end : Math.min(end, nextDirty * bs);
    Flusher.Piece ahead = f.writtenAt(blk);
    if (ahead != null) { // written ahead of its commit: only this node knows where it is
      limit = Math.min(limit, ahead.fileEnd() * bs);
      readDevice(dst, ahead.deviceBlock(blk) * bs + in, (int) (limit - pos));
      return limit - pos;
    }
    Long nextAhead = f.written.higherKey(blk);
    if (nextAhead != null) {
      limit = Math.min(limit, nextAhead * bs);
    }
    int idx = ExtentMap.find(list, blk);
    if (idx >= 0) {
      FileExtent e = list.get(idx);
      limit = Math.min(limit, e.fileEnd() * bs);
      readDevice(dst, (e.deviceBlock() + blk - e.fileBlock()) * bs + in, (int) (limit - pos));
    } else {
      int next = -idx - 1;
      if (next < list.size()) {
        limit = Math.min(limit, list.get(next).fileBlock() * bs);
      }
      zero(dst, (int) (limit - pos));
    }
    return limit - pos;
  }

  private void readDevice(ByteBuffer dst, long devOffset, int len) throws FsException {
    ByteBuffer slice = dst.slice();
    slice.limit(len);
    try {
      ctx.device.read(slice, devOffset);
    } catch (IOException e) {
      throw new FsException(Errno.EIO, "device read at " + devOffset + ": " + e.getMessage(), e);
    }
    zero(slice, slice.remaining());
    dst.position(dst.position() + len);
  }

  private static final byte[] ZEROS = new byte[64 * 1024];

  static void zero(ByteBuffer dst, int len) {
    for (int left = len; left > 0; left -= ZEROS.length) {
      dst.put(ZEROS, 0, Math.min(left, ZEROS.length));
    }
  }

  /**
   * lseek(2)'s SEEK_DATA and SEEK_HOLE, under the same locks as a read: another node's unflushed
   * writes are recalled (committed) first, this node's are in its buffer, so the answer covers
   * every write() that returned before it. A block is data if the committed extent map holds it
   * or it is buffered here (in memory or written ahead); every other block below the size is a
   * hole. The answer is whole blocks, as the map is: a partly written block is all data.
   */
  long seek(FileData f, long off, boolean hole) throws FsException {
    return underReadLock(f, () -> seekLocked(f, off, hole));
  }

  private long seekLocked(FileData f, long off, boolean hole) throws FsException {
    Extents.Snapshot s = extents.snapshot(f.ino);
    long size = Math.max(s.inode().size(), f.pendingEnd);
    if (off < 0 || off >= size) {
      throw new FsException(Errno.ENXIO, "seek at " + off + " of a " + size + " byte file");
    }
    long bs = ctx.blockSize;
    List<FileExtent> list = s.chunks().extents();
    long last = (size - 1) / bs;
    if (hole) {
      return Math.min(size, Math.max(off, firstHole(f, list, off / bs, last) * bs));
    }
    long data = firstData(f, list, off / bs);
    if (data > last) {
      throw new FsException(Errno.ENXIO, "no data after " + off + " in " + size + " bytes");
    }
    return Math.max(off, data * bs);
  }

  /** The first block at or after {@code blk} mapped or buffered; Long.MAX_VALUE if none. */
  private static long firstData(FileData f, List<FileExtent> list, long blk) {
    Long dirty = f.dirty.ceilingKey(blk);
    long found = dirty == null ? Long.MAX_VALUE : dirty;
    int idx = ExtentMap.find(list, blk);
    if (idx >= 0 || f.writtenAt(blk) != null) {
      return blk;
    }
    Long ahead = f.written.higherKey(blk);
    if (ahead != null) {
      found = Math.min(found, ahead);
    }
    int next = -idx - 1;
    return next < list.size() ? Math.min(found, list.get(next).fileBlock()) : found;
  }

  /** The first block at or after {@code blk} neither mapped nor buffered; past {@code last}. */
  private static long firstHole(FileData f, List<FileExtent> list, long blk, long last) {
    long b = blk;
    while (b <= last) {
      if (f.dirty.containsKey(b)) {
        b++;
        continue;
      }
      Flusher.Piece ahead = f.writtenAt(b);
      if (ahead != null) {
        b = ahead.fileEnd();
        continue;
      }
      int idx = ExtentMap.find(list, b);
      if (idx < 0) {
        return b;
      }
      b = list.get(idx).fileEnd();
    }
    return b;
  }

  /** Writes under this node's exclusive lock, so appends from many nodes land one after another. */
  int write(FileData f, ByteBuffer src, long off, boolean append) throws FsException {
    return underWriteLock(f, () -> writeLocked(f, src, off, append));
  }

  /**
   * Runs {@code body} holding the file's exclusive lock, declared dirty, and its local lock;
   * asks again if the lock was recalled between the two.
   */
  private <T> T underWriteLock(FileData f, Locked<T> body) throws FsException {
    while (true) {
      HeldLock lock = locks.hold(f.ino, LockMode.EXCLUSIVE);
      f.lock.lock();
      try {
        // A close may have declared the lock clean: other nodes must see it dirty before a
        // write is buffered under it (else their stat would skip the recall).
        if (locks.isCurrent(f.ino, lock) && locks.dirty(lock)) {
          return body.run();
        }
      } finally {
        f.lock.unlock();
      }
    }
  }

  /**
   * fallocate(PUNCH_HOLE | KEEP_SIZE) under this node's exclusive lock: the parts of blocks at
   * either end are written with zeros like any write (a block that is a hole already is left
   * alone), the whole blocks between are dropped from the buffer, everything buffered is
   * committed, and then the committed extents of those blocks are removed and their blocks
   * freed, in bounded transactions ({@link Truncator#removeRange}). Nothing past the size.
   */
  void punch(FileData f, long off, long len) throws FsException {
    underWriteLock(f, () -> punchLocked(f, off, len));
  }

  private Void punchLocked(FileData f, long off, long len) throws FsException {
    flusher.land(f); // before any block is dropped: a failed write-out puts its blocks back
    long end = Math.min(off + len, size(f));
    if (off >= end) {
      return null;
    }
    long bs = ctx.blockSize;
    long first = (off + bs - 1) / bs;
    long last = end / bs;
    if (first >= last) {
      zeroBytes(f, off, end);
      return null;
    }
    zeroBytes(f, off, first * bs);
    zeroBytes(f, last * bs, end);
    var inside = f.dirty.subMap(first, last);
    budget.give((long) inside.size() * bs);
    inside.clear(); // their promise goes back at the flush (Reservations.settle)
    flusher.flush(f);
    truncator.removeRange(f.ino, first, last);
    return null;
  }

  /**
   * fallocate(2) mode 0, or {@code KEEP_SIZE} inside the size, under this node's exclusive lock:
   * every block of the range that is a hole here (neither committed nor buffered) is written
   * with zeros like any write, and so is the part of the range past the size; then everything is
   * committed, as by fsync. The blocks are then the file's, contiguous where the allocator could,
   * allocated and durable as posix_fallocate promises, and later writes below the size overwrite
   * them in place (docs/ARCHITECTURE.md, "Overwrites in place"). The range reads as zeros where
   * it read as zeros before; no byte of data changes. A range the device has no room for fails
   * with ENOSPC, after what was written so far is committed (the file keeps those blocks).
   */
  void preallocate(FileData f, long off, long len, boolean keepSize) throws FsException {
    underWriteLock(f, () -> preallocateLocked(f, off, len, keepSize));
  }

  private Void preallocateLocked(FileData f, long off, long len, boolean keepSize)
      throws FsException {
    long size = size(f);
    long end = off + len;
    if (keepSize && end > size) {
      throw new FsException(Errno.EOPNOTSUPP, "fallocate KEEP_SIZE past the end of the file:"
          + " blocks past the size are not kept (a write there goes to fresh blocks)");
    }
    long bs = ctx.blockSize;
    List<FileExtent> map = extents.snapshot(f.ino).chunks().extents();
    try {
      for (long b = off / bs; b <= (end - 1) / bs; b++) {
        long from = Math.max(off, b * bs);
        long to = Math.min(end, (b + 1) * bs);
        boolean data = f.dirty.containsKey(b) || f.writtenAt(b) != null
            || ExtentMap.find(map, b) >= 0;
        if (data) {
          from = Math.max(from, size); // only what lies past the size, which reads as zeros
        }
        if (from < to) {
          writeLocked(f, ByteBuffer.wrap(new byte[(int) (to - from)]), from, false);
        }
      }
    } catch (FsException e) {
      if (e.errno() == Errno.ENOSPC) {
        flusher.flush(f); // what was set aside is the file's: commit it, then say why not all
      }
      throw e;
    }
    flusher.flush(f);
    return null;
  }

  /** Zeros [from, to), within one block, unless that block reads as zeros already (a hole). */
  private void zeroBytes(FileData f, long from, long to) throws FsException {
    if (from >= to) {
      return;
    }
    long blk = from / ctx.blockSize;
    if (!f.dirty.containsKey(blk) && f.writtenAt(blk) == null
        && ExtentMap.find(extents.snapshot(f.ino).chunks().extents(), blk) < 0) {
      return;
    }
    writeLocked(f, ByteBuffer.wrap(new byte[(int) (to - from)]), from, false);
  }

  private int writeLocked(FileData f, ByteBuffer src, long off, boolean append)
      throws FsException {
    long at = append ? size(f) : off;
    int n = src.remaining();
    if (at < 0 || at + n > MAX_FILE) {
      throw new FsException(Errno.EFBIG, "write past the largest file size");
    }
    if (n == 0) {
      return 0;
    }
    long fresh = newBlocks(f, at, n);
    if (!f.dirty.isEmpty() && (budget.wouldExceed(fresh * ctx.blockSize)
        || budget.fileOver((f.dirty.size() + fresh) * ctx.blockSize))) {
      flusher.writeOut(f); // to the device now, committed at the next flush
      fresh = newBlocks(f, at, n);
    }
    // Space first: a write that returned must never be dropped at the flush for lack of it.
    flusher.reservations.reserve(f, fresh);
    try {
      copyIn(f, src, at, n);
    } catch (FsException | RuntimeException e) {
      flusher.reservations.settle(f);
      throw e;
    }
    f.pendingEnd = Math.max(f.pendingEnd, at + n);
    f.writtenNs = Ctx.now();
    PendingAttrs pending = f.pendingAttrs;
    if (pending != null) {
      f.pendingAttrs = pending.afterWrite();
    }
    return n;
  }

  private long newBlocks(FileData f, long at, int n) {
    long bs = ctx.blockSize;
    long count = 0;
    for (long b = at / bs; b <= (at + n - 1) / bs; b++) {
      count += f.dirty.containsKey(b) ? 0 : 1;
    }
    return count;
  }

  /** Waits for {@code f}'s write-out in flight if it holds a block of [off, off + n). */
  private void landIfMet(FileData f, long off, long n) {
    Flusher.Landing l = f.landing;
    long bs = ctx.blockSize;
    if (l != null && n > 0 && l.overlaps(off / bs, (off + n - 1) / bs + 1)) {
      flusher.land(f);
    }
  }

  private void copyIn(FileData f, ByteBuffer src, long at, int n) throws FsException {
    landIfMet(f, at, n); // a block written in part reads what is on the device first
    int bs = ctx.blockSize;
    Extents.Snapshot s = null;
    for (long pos = at; pos < at + n; ) {
      long blk = pos / bs;
      int in = (int) (pos % bs);
      int len = (int) Math.min(bs - in, at + n - pos);
      byte[] buf = f.dirty.get(blk);
      if (buf == null) {
        buf = new byte[bs];
        Flusher.Piece ahead = f.writtenAt(blk);
        if (ahead != null) {
          if (len < bs) {
            readDevice(ByteBuffer.wrap(buf), ahead.deviceBlock(blk) * bs, bs);
          }
          flusher.unwrite(f, blk, blk + 1); // the buffered copy supersedes it
        } else if (len < bs) {
          s = s == null ? extents.snapshot(f.ino) : s;
          fillCommitted(s, blk, buf);
        }
        f.dirty.put(blk, buf);
        budget.take(bs);
      }
      src.get(buf, in, len);
      pos += len;
    }
  }

  /** Read-modify-write: a partly written block keeps the rest of its committed content. */
  void fillCommitted(Extents.Snapshot s, long blk, byte[] buf) throws FsException {
    List<FileExtent> list = s.chunks().extents();
    int idx = ExtentMap.find(list, blk);
    if (idx >= 0) {
      FileExtent e = list.get(idx);
      readDevice(ByteBuffer.wrap(buf), (e.deviceBlock() + blk - e.fileBlock()) * ctx.blockSize,
          buf.length);
    }
  }
}

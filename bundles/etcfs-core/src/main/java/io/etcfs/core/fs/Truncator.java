package io.etcfs.core.fs;

import io.etcfs.core.fs.meta.ExtentChunks;
import io.etcfs.core.fs.meta.ExtentMap;
import io.etcfs.core.fs.meta.FileExtent;
import io.etcfs.core.fs.meta.Inode;
import io.etcfs.core.fs.tx.OutcomeUnknownException;
import io.etcfs.spi.alloc.Allocator;
import io.etcfs.spi.alloc.Extent;
import io.etcfs.spi.alloc.NoSpaceException;
import io.etcfs.spi.lock.HeldLock;
import io.etcfs.spi.lock.LockMode;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * truncate. Shrinking into the middle of a block copies that block to a fresh one with its tail
 * zeroed, so a later extension reads zeros there and never the old bytes (invariant 2). A large
 * shrink runs from the end in bounded steps, each a valid smaller file.
 */
final class Truncator {
  private static final int MAX_ATTEMPTS = 16;
  /** Done; one bounded step taken (go on); or nothing written because the file moved (retry). */
  private enum Step { DONE, STEP, RETRY }

  private final Ctx ctx;
  private final Extents extents;
  private final Flusher flusher;
  private final OpenFiles open;
  private final MemoryBudget budget;
  private final InodeLocks locks;

  Truncator(Ctx ctx, Extents extents, Flusher flusher, OpenFiles open, MemoryBudget budget,
      InodeLocks locks) {
    this.locks = locks;
    this.ctx = ctx;
    this.extents = extents;
    this.flusher = flusher;
    this.open = open;
    this.budget = budget;
  }

  void truncate(long ino, long size) throws FsException {
    if (size < 0) {
      throw new FsException(Errno.EINVAL, "negative size");
    }
    if (size > DataPath.MAX_FILE) {
      throw new FsException(Errno.EFBIG, "truncate past the largest file size");
    }
    while (true) {
      HeldLock lock = locks.hold(ino, LockMode.EXCLUSIVE);
      FileData f = open.get(ino);
      if (f == null) {
        if (locks.isCurrent(ino, lock)) {
          shrinkOrGrow(ino, size);
          return;
        }
        continue;
      }
      f.lock.lock();
      try {
        if (!locks.isCurrent(ino, lock)) {
          continue; // recalled between the two: ask again
        }
        truncateOpen(f, ino, size);
        return;
      } finally {
        f.lock.unlock();
      }
    }
  }

  private void truncateOpen(FileData f, long ino, long size) throws FsException {
    flusher.land(f); // before any block is dropped: a failed write-out puts its blocks back
    dropBuffered(f, size);
    zeroWrittenTail(f, size);
    flusher.flush(f);
    shrinkOrGrow(ino, size);
  }

  /** Buffered data past the new end is gone before it was ever committed. */
  private void dropBuffered(FileData f, long size) {
    long bs = ctx.blockSize;
    long cut = (size + bs - 1) / bs;
    while (!f.dirty.isEmpty() && f.dirty.lastKey() >= cut) {
      f.dirty.pollLastEntry();
      budget.give(bs);
    }
    byte[] partial = size % bs == 0 ? null : f.dirty.get(size / bs);
    if (partial != null) {
      Arrays.fill(partial, (int) (size % bs), (int) bs, (byte) 0);
    }
    flusher.unwrite(f, cut, Long.MAX_VALUE);
    // Blocks overwritten in place are written data too: the flush commits the size they reach.
    f.pendingEnd = f.dirty.isEmpty() && f.written.isEmpty() && !f.overwritten ? -1
        : Math.min(f.pendingEnd, size);
  }

  /**
   * The block the new end falls in, if it was written ahead of its commit, reads as zeros past
   * the end: its device block is rewritten in place, which is safe only because nothing
   * committed references it yet (the flush that follows maps it).
   */
  private void zeroWrittenTail(FileData f, long size) throws FsException {
    long bs = ctx.blockSize;
    int in = (int) (size % bs);
    Flusher.Piece ahead = in == 0 ? null : f.writtenAt(size / bs);
    if (ahead == null) {
      return;
    }
    long at = ahead.deviceBlock(size / bs) * bs + in;
    try {
      ctx.device.write(ByteBuffer.wrap(new byte[(int) bs - in]), at);
    } catch (IOException e) {
      throw new FsException(Errno.EIO, "device write at " + at + ": " + e.getMessage(), e);
    }
  }

  private void shrinkOrGrow(long ino, long size) throws FsException {
    for (int attempt = 0; attempt < MAX_ATTEMPTS; ) {
      Extents.Snapshot s = extents.snapshot(ino);
      if (!s.inode().isRegular()) {
        throw new FsException(s.inode().isDir() ? Errno.EISDIR : Errno.EINVAL,
            "truncate of non-regular inode " + ino);
      }
      long cut = (size + ctx.blockSize - 1) / ctx.blockSize;
      boolean last = size >= s.inode().size() || s.chunks().tailStep(cut, Purger.STEP_EXTENTS) <= cut;
      Flusher.Piece cow = last && size < s.inode().size() ? copyTail(s, size) : null;
      Step step;
      try {
        step = ctx.tx.run("truncate " + ino, tx -> {
          locks.fence(tx, ino, false);
          Optional<KeyValue> kv = tx.get(ctx.keys.inode(ino));
          Inode i = Records.inode(kv, ino);
          if (cow != null && kv.get().modRevision() != s.revision()) {
            return Step.RETRY;
          }
          return apply(tx, i, extents.read(tx, ino), size, cow);
        });
      } catch (OutcomeUnknownException e) {
        throw e; // the copied tail block may be committed: never abandon it
      } catch (FsException | RuntimeException e) {
        abandon(cow);
        throw e;
      }
      if (step == Step.DONE) {
        return;
      }
      abandon(cow);
      attempt += step == Step.RETRY ? 1 : 0;
    }
    throw new FsException(Errno.EIO, "truncate of " + ino + " kept conflicting");
  }

  private Step apply(io.etcfs.core.fs.tx.MetaTx tx, Inode i, ExtentChunks chunks, long size,
      Flusher.Piece cow) throws FsException {
    long bs = ctx.blockSize;
    long now = Ctx.now();
    if (size >= i.size()) {
      extents.putInode(tx, i.withSize(size, i.blocks()).withTimes(i.atimeNs(), now, now), chunks);
      return Step.DONE;
    }
    long cut = (size + bs - 1) / bs;
    long from = chunks.tailStep(cut, Purger.STEP_EXTENTS);
    boolean last = from <= cut;
    boolean needsCow = size % bs != 0 && mapped(chunks, size / bs);
    if ((last && needsCow && cow == null) || (!last && cow != null)) {
      return Step.RETRY;
    }
    List<FileExtent> added = cow == null ? List.of() : List.of(cow.mapping());
    ExtentChunks.Change change = chunks.replace(cow == null ? from : cow.fileBlock(),
        Long.MAX_VALUE, added);
    List<Extent> released = extents.apply(tx, i.ino(), change);
    long newSize = last ? size : Math.max(size, Math.min(i.size(), from * bs));
    long blocks = i.blocks() + ExtentMap.blocks(added) - ExtentMap.blocks(change.removed());
    extents.putInode(tx, i.withSize(newSize, blocks).withTimes(i.atimeNs(), now, now),
        change.after());
    extents.allocate(tx, i.ino(), cow == null ? List.of() : List.of(cow.dev()), released);
    return last ? Step.DONE : Step.STEP;
  }

  /**
   * Frees the committed blocks [from, to) of {@code ino} (a punched hole; the caller holds the
   * exclusive lock and has committed what it buffered), in transactions of at most {@link
   * Purger#STEP_EXTENTS} extents, each a valid file: the extents unmapped, their blocks
   * released through the allocator in the same transaction (invariant 1), the size kept and
   * the times changed as by a write.
   */
  void removeRange(long ino, long from, long to) throws FsException {
    long at = from;
    while (at < to) {
      long start = at;
      at = ctx.tx.run("punch a hole in " + ino, tx -> {
        locks.fence(tx, ino, false);
        Inode i = Records.inode(tx.get(ctx.keys.inode(ino)), ino);
        ExtentChunks chunks = extents.read(tx, ino);
        long stop = stepEnd(chunks.extents(), start, to, Purger.STEP_EXTENTS);
        ExtentChunks.Change change = chunks.replace(start, stop, List.of());
        long now = Ctx.now();
        if (change.removed().isEmpty()) {
          if (stop == to) {
            extents.putInode(tx, i.withTimes(i.atimeNs(), now, now), chunks);
          }
          return stop;
        }
        List<Extent> released = extents.apply(tx, ino, change);
        long blocks = i.blocks() - ExtentMap.blocks(change.removed());
        extents.putInode(tx, i.withSize(i.size(), blocks).withTimes(i.atimeNs(), now, now),
            change.after());
        extents.allocate(tx, ino, List.of(), released);
        return stop;
      });
    }
  }

  /** Where a step from {@code from} ends: after at most {@code max} mapped extents, by {@code to}. */
  static long stepEnd(List<FileExtent> map, long from, long to, int max) {
    int idx = ExtentMap.find(map, from);
    int i = idx >= 0 ? idx : -idx - 1;
    int seen = 0;
    for (; i < map.size() && map.get(i).fileBlock() < to; i++) {
      if (++seen > max) {
        return Math.max(from + 1, map.get(i).fileBlock());
      }
    }
    return to;
  }

  private static boolean mapped(ExtentChunks chunks, long block) {
    return ExtentMap.find(chunks.extents(), block) >= 0;
  }

  /** Copies the block the new end falls in to a fresh block, zeroed past the end. */
  private Flusher.Piece copyTail(Extents.Snapshot s, long size) throws FsException {
    long bs = ctx.blockSize;
    long blk = size / bs;
    List<FileExtent> map = s.chunks().extents();
    int idx = ExtentMap.find(map, blk);
    if (size % bs == 0 || idx < 0) {
      return null;
    }
    FileExtent e = map.get(idx);
    ByteBuffer buf = ByteBuffer.allocate((int) bs);
    Allocator a = ctx.allocator();
    try {
      ctx.device.read(buf, (e.deviceBlock() + blk - e.fileBlock()) * bs);
      Arrays.fill(buf.array(), (int) (size % bs), (int) bs, (byte) 0);
      List<Extent> got = a.allocate(1, e.deviceBlock() + blk - e.fileBlock() + 1);
      try {
        ctx.device.write(ByteBuffer.wrap(buf.array()), got.get(0).start() * bs);
        ctx.device.flush();
      } catch (IOException ex) {
        a.abandon(got);
        throw ex;
      }
      return new Flusher.Piece(blk, got.get(0));
    } catch (NoSpaceException ex) {
      throw new FsException(Errno.ENOSPC, "no space to truncate " + s.inode().ino());
    } catch (IOException ex) {
      throw new FsException(Errno.EIO, "device I/O truncating " + s.inode().ino() + ": " + ex, ex);
    }
  }

  private void abandon(Flusher.Piece cow) {
    if (cow != null) {
      try {
        ctx.allocator().abandon(List.of(cow.dev()));
      } catch (FsException e) {
        // no allocator bound any more: its reservation died with it
      }
    }
  }
}

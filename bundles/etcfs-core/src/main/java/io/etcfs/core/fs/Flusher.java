package io.etcfs.core.fs;

import io.etcfs.core.fs.meta.ExtentChunks;
import io.etcfs.core.fs.meta.ExtentMap;
import io.etcfs.core.fs.meta.FileExtent;
import io.etcfs.core.fs.meta.Inode;
import io.etcfs.core.fs.tx.OutcomeUnknownException;
import io.etcfs.spi.alloc.Allocator;
import io.etcfs.spi.alloc.Extent;
import io.etcfs.spi.alloc.NoSpaceException;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Allocate-on-write commit of a file's buffer: fresh blocks (continuing where the file's data
 * lies, so sequential writes stay contiguous), the data written and made durable on the device,
 * and only then one transaction per bounded batch mapping them (invariant 2); the replaced
 * blocks are released through the allocator in that same transaction. A committed block is never
 * written again, so a paused node that wakes up cannot damage data someone else now owns.
 */
final class Flusher {
  /** File blocks per allocation run: 4 MiB, a bounded temporary buffer. */
  static final int MAX_RUN = 1024;
  /** Extents a batch adds, and existing extents a run may replace: well inside 128 ops. */
  static final int MAX_EXTENTS = 24;

  /** File blocks starting at {@code fileBlock} now live in {@code dev}. */
  record Piece(long fileBlock, Extent dev) {
    FileExtent mapping() {
      return new FileExtent(fileBlock, dev.start(), dev.length());
    }
  }

  /** The blocks of one run, written, and how many committed extents the run replaces. */
  private record Written(List<Piece> pieces, int overlapped) {}

  private final Ctx ctx;
  private final Extents extents;
  private final MemoryBudget budget;
  private final InodeLocks locks;
  /** The space promised to buffered blocks: spent here, given back wherever blocks are dropped. */
  final Reservations reservations;
  /**
   * Commits at a release (nobody waits for them: {@code close(2)} has returned) go in groups:
   * one device flush and as few transactions as their keys allow for all the files released
   * meanwhile.
   */
  private final io.etcfs.core.fs.tx.GroupCommit releases;

  Flusher(Ctx ctx, Extents extents, MemoryBudget budget, InodeLocks locks) {
    this.ctx = ctx;
    this.extents = extents;
    this.budget = budget;
    this.locks = locks;
    this.reservations = new Reservations(ctx);
    this.releases = new io.etcfs.core.fs.tx.GroupCommit(ctx.tx, () -> ctx.device.flush());
  }

  /** Commits everything buffered for {@code f}; the caller holds its lock. */
  void flush(FileData f) throws FsException {
    flush(f, false);
  }

  /**
   * As {@link #flush(FileData)}; with {@code declareClean} (a close) the last commit also
   * declares this node's exclusive lock clean, so other nodes state the file without a recall
   * until the next write here. Only where it rides on a commit anyway: a round trip for it
   * alone is not worth a close's time.
   */
  void flush(FileData f, boolean declareClean) throws FsException {
    reservations.settle(f); // a truncate may have dropped buffered blocks
    if (f.dirty.isEmpty() && f.pendingAttrs == null) {
      return;
    }
    try {
      locks.guards(f.ino);
    } catch (FsException e) {
      // Invariant 4: without its exclusive lock this node writes nothing more for the file.
      drop(f);
      throw e;
    }
    if (f.dirty.isEmpty()) {
      commitAttributes(f, declareClean);
      return;
    }
    Extents.Snapshot s = extents.snapshot(f.ino);
    Allocator a = ctx.allocator();
    List<Piece> pieces = new ArrayList<>();
    List<Written> written = new ArrayList<>();
    List<FileExtent> map = s.chunks().extents();
    long spent = 0;
    List<Integer> ends;
    boolean grouped;
    try {
      for (List<Long> run : runs(f, map)) {
        int from = pieces.size();
        spent += allocateAndWrite(f, a, run, goal(map, pieces, run.get(0)), pieces);
        written.add(new Written(List.copyOf(pieces.subList(from, pieces.size())),
            overlapped(map, run)));
      }
      ends = batches(written);
      // A release's one commit goes in a group, whose leader flushes the device for all of it
      // before any of the group's metadata is committed (invariant 2).
      grouped = declareClean && ends.size() == 1;
      if (!grouped) {
        ctx.device.flush();
      }
    } catch (NoSpaceException e) {
      abandon(f, a, pieces, spent);
      throw new FsException(Errno.ENOSPC, "no space for inode " + f.ino + ": " + e.getMessage());
    } catch (IOException e) {
      abandon(f, a, pieces, spent);
      throw new FsException(Errno.EIO, "device write for inode " + f.ino + ": " + e, e);
    } catch (RuntimeException e) {
      abandon(f, a, pieces, spent);
      throw e;
    }
    commitAll(f, a, pieces, ends, declareClean, spent, grouped);
  }

  /**
   * Drops everything {@code f} buffered, and the space promised to it: the lock is lost, or the
   * last close could not commit it. The caller holds the file's lock.
   */
  void drop(FileData f) {
    budget.give((long) f.dirty.size() * ctx.blockSize);
    f.dirty.clear();
    f.pendingEnd = -1;
    f.pendingAttrs = null;
    reservations.settle(f);
  }

  /** Commits buffered chmod, chown and utimens alone (nothing of the data is buffered). */
  private void commitAttributes(FileData f, boolean declareClean) throws FsException {
    PendingAttrs pending = f.pendingAttrs;
    io.etcfs.core.fs.tx.TxBody<Void> body = tx -> {
      locks.guards(f.ino).forEach(tx::guard);
      Inode i = Records.inode(tx.get(ctx.keys.inode(f.ino)), f.ino);
      tx.put(ctx.keys.inode(f.ino), io.etcfs.core.fs.meta.Codec.inode(pending.applyTo(i)));
      if (declareClean) {
        tx.ops(locks.cleanOps(f.ino));
      }
      return null;
    };
    String what = "commit attributes of inode " + f.ino;
    if (declareClean) {
      releases.run(what, body);
    } else {
      ctx.tx.run(what, body);
    }
    if (f.pendingAttrs == pending) {
      f.pendingAttrs = null;
    }
  }

  /** Groups runs into transactions of bounded size; a long run is split alone. */
  private static List<Integer> batches(List<Written> written) {
    List<Integer> ends = new ArrayList<>();
    int at = 0;
    int pieces = 0;
    int overlapped = 0;
    for (Written w : written) {
      if (pieces > 0 && (pieces + w.pieces().size() > MAX_EXTENTS
          || overlapped + w.overlapped() > MAX_EXTENTS)) {
        ends.add(at);
        pieces = 0;
        overlapped = 0;
      }
      for (int i = 0; i < w.pieces().size(); i++) {
        if (pieces == MAX_EXTENTS) {
          ends.add(at);
          pieces = 0;
          overlapped = 0;
        }
        pieces++;
        at++;
      }
      overlapped += w.overlapped();
    }
    ends.add(at);
    return ends;
  }

  private static int overlapped(List<FileExtent> map, List<Long> run) {
    int count = 0;
    int last = Integer.MIN_VALUE;
    for (long b : run) {
      int idx = ExtentMap.find(map, b);
      if (idx >= 0 && idx != last) {
        count++;
      }
      last = idx;
    }
    return count;
  }

  private void commitAll(FileData f, Allocator a, List<Piece> pieces, List<Integer> ends,
      boolean declareClean, long spent, boolean grouped) throws FsException {
    int i = 0;
    for (int end : ends) {
      if (end == i) {
        continue;
      }
      List<Piece> batch = pieces.subList(i, end);
      try {
        // Every dirty block is in some run, so after the last batch nothing is buffered.
        commit(f, a, batch, declareClean && end == pieces.size(), grouped);
      } catch (OutcomeUnknownException e) {
        // This batch may be committed: its blocks stay allocated, so their promise is spent.
        abandon(f, a, pieces.subList(end, pieces.size()), spent);
        throw e;
      } catch (FsException | RuntimeException e) {
        abandon(f, a, pieces.subList(i, pieces.size()), spent);
        throw e;
      }
      for (Piece p : batch) {
        for (long b = p.fileBlock(); b < p.fileBlock() + p.dev().length(); b++) {
          f.dirty.remove(b);
          budget.give(ctx.blockSize);
        }
      }
      i = end;
    }
    if (f.dirty.isEmpty()) {
      f.pendingEnd = -1;
      f.pendingAttrs = null; // every batch carried them; the last one is in
    }
  }

  private void commit(FileData f, Allocator a, List<Piece> batch, boolean clean,
      boolean grouped) throws FsException {
    List<FileExtent> added = batch.stream().map(Piece::mapping).toList();
    List<Extent> referenced = batch.stream().map(Piece::dev).toList();
    long end = added.get(added.size() - 1).fileEnd() * ctx.blockSize;
    io.etcfs.core.fs.tx.TxBody<Void> body = tx -> {
      locks.guards(f.ino).forEach(tx::guard);
      Inode i = Records.inode(tx.get(ctx.keys.inode(f.ino)), f.ino);
      ExtentChunks.Change change = extents.read(tx, f.ino).overwrite(added);
      List<Extent> released = extents.apply(tx, f.ino, change);
      long size = Math.max(i.size(), Math.min(f.pendingEnd, end));
      long blocks = i.blocks() + ExtentMap.blocks(added) - ExtentMap.blocks(change.removed());
      long now = Ctx.now();
      Inode written = i.withSize(size, blocks).withTimes(i.atimeNs(), now, now);
      PendingAttrs pending = f.pendingAttrs;
      extents.putInode(tx, pending == null ? written : pending.applyTo(written), change.after());
      extents.allocate(tx, f.ino, referenced, released);
      if (clean) {
        tx.ops(locks.cleanOps(f.ino));
      }
      return null;
    };
    if (grouped) {
      releases.run("commit data of inode " + f.ino, body);
    } else {
      ctx.tx.run("commit data of inode " + f.ino, body);
    }
  }

  /** Consecutive dirty blocks, cut so that no run is too long or replaces too many extents. */
  private static List<List<Long>> runs(FileData f, List<FileExtent> map) {
    List<List<Long>> runs = new ArrayList<>();
    List<Long> run = new ArrayList<>();
    int overlapped = 0;
    int lastIdx = Integer.MIN_VALUE;
    for (long b : f.dirty.keySet()) {
      int idx = ExtentMap.find(map, b);
      boolean newExtent = idx >= 0 && idx != lastIdx;
      boolean cut = !run.isEmpty() && (run.get(run.size() - 1) != b - 1
          || run.size() >= MAX_RUN || (newExtent && overlapped >= MAX_EXTENTS));
      if (cut) {
        runs.add(run);
        run = new ArrayList<>();
        overlapped = 0;
      }
      overlapped += newExtent ? 1 : 0;
      lastIdx = idx;
      run.add(b);
    }
    runs.add(run);
    return runs;
  }

  /** The device block after the file's data just before {@code block}: keeps files contiguous. */
  private static long goal(List<FileExtent> map, List<Piece> pieces, long block) {
    if (!pieces.isEmpty()) {
      Piece last = pieces.get(pieces.size() - 1);
      if (last.fileBlock() + last.dev().length() == block) {
        return last.dev().end();
      }
    }
    int idx = ExtentMap.find(map, block - 1);
    int before = idx >= 0 ? idx : -idx - 2;
    if (before < 0) {
      return -1;
    }
    FileExtent e = map.get(before);
    return e.deviceBlock() + Math.min(e.length(), block - e.fileBlock());
  }

  /** Returns how much of the file's promise the allocation spent. */
  private long allocateAndWrite(FileData f, Allocator a, List<Long> run, long goal,
      List<Piece> pieces) throws NoSpaceException, IOException {
    long spent = reservations.spend(f, run.size());
    List<Extent> got;
    try {
      got = a.allocate(run.size(), goal, spent);
    } catch (NoSpaceException | RuntimeException e) {
      f.reservedBlocks += spent; // all or nothing: the allocator still promises it
      throw e;
    }
    if (got.stream().mapToLong(Extent::length).sum() != run.size()) {
      a.abandon(got, spent);
      f.reservedBlocks += spent;
      throw new IOException("allocator returned " + got + " for " + run.size() + " blocks");
    }
    long fileBlock = run.get(0);
    for (Extent dev : got) {
      pieces.add(new Piece(fileBlock, dev));
      ByteBuffer buf = ByteBuffer.allocate((int) dev.length() * ctx.blockSize);
      for (long b = fileBlock; b < fileBlock + dev.length(); b++) {
        buf.put(f.dirty.get(b));
      }
      ctx.device.write(buf.flip(), dev.start() * ctx.blockSize);
      fileBlock += dev.length();
    }
    return spent;
  }

  /** Blocks that will not be committed; the buffer keeps what it still holds promised. */
  private void abandon(FileData f, Allocator a, List<Piece> pieces, long spent) {
    if (!pieces.isEmpty()) {
      long blocks = pieces.stream().mapToLong(p -> p.dev().length()).sum();
      a.abandon(pieces.stream().map(Piece::dev).toList(),
          reservations.refund(f, blocks, spent));
    }
  }
}

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
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.logging.Logger;

/**
 * Allocate-on-write commit of a file's buffer: fresh blocks (continuing where the file's data
 * lies, so sequential writes stay contiguous), the data written and made durable on the device,
 * and only then one transaction per bounded batch mapping them (invariant 2); the replaced
 * blocks are released through the allocator in that same transaction. A committed block is never
 * written again, so a paused node that wakes up cannot damage data someone else now owns.
 *
 * <p>Write early, commit late: when a write finds the buffer full, {@link #writeOut} writes the
 * buffered blocks to their fresh blocks at once and keeps them, uncommitted, in {@code
 * FileData.written}; the next flush (fsync, close, recall, truncate) makes the device durable
 * once and maps them all. A writer streams to the device instead of waiting for a device flush
 * and a commit every few MiB, and what fsync must wait for is one flush and the commits.
 */
final class Flusher {
  private static final Logger LOG = Logger.getLogger(Flusher.class.getName());
  /** File blocks per allocation run: 4 MiB, a bounded temporary buffer. */
  static final int MAX_RUN = 1024;
  /** Extents a batch adds, and existing extents a run may replace: well inside 128 ops. */
  static final int MAX_EXTENTS = 24;

  /** File blocks starting at {@code fileBlock} now live in {@code dev}. */
  record Piece(long fileBlock, Extent dev) {
    FileExtent mapping() {
      return new FileExtent(fileBlock, dev.start(), dev.length());
    }

    long fileEnd() {
      return fileBlock + dev.length();
    }

    /** The device block that holds file block {@code block} (inside this piece). */
    long deviceBlock(long block) {
      return dev.start() + block - fileBlock;
    }
  }

  /**
   * Written-ahead pieces a file may hold before a write-out commits instead: 192 runs of at most
   * 4 MiB, eight transactions at the commit that maps them. Scattered writes (a run per block)
   * reach it at once and so commit at every write-out, as they would without writing ahead.
   */
  static final int MAX_WRITTEN = 8 * MAX_EXTENTS;
  /** Threads writing write-outs to the device: as many files stream at once. */
  private static final int WRITERS = 4;

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
  /**
   * The device writes of write-outs ({@link Landing}): a writer whose buffer filled goes on
   * filling it while its last write-out is written, instead of waiting for the device.
   */
  private final java.util.concurrent.ExecutorService writers =
      java.util.concurrent.Executors.newFixedThreadPool(WRITERS, r -> {
        Thread t = new Thread(r, "etcfs-write-out");
        t.setDaemon(true);
        return t;
      });
  private final ThreadLocal<ByteBuffer> gatherBuffer =
      ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(0)); // grown to a piece

  Flusher(Ctx ctx, Extents extents, MemoryBudget budget, InodeLocks locks) {
    this.ctx = ctx;
    this.extents = extents;
    this.budget = budget;
    this.locks = locks;
    this.reservations = new Reservations(ctx);
    this.releases = new io.etcfs.core.fs.tx.GroupCommit(ctx.tx, () -> ctx.device.flush());
  }

  /** No more write-outs in the background: later ones are written by their caller. */
  void close() {
    writers.shutdown();
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
    land(f);
    reservations.settle(f); // a truncate may have dropped buffered blocks
    if (!f.hasBuffered()) {
      return;
    }
    guardOrDrop(f);
    List<FileExtent> map = overwriteInPlace(f);
    if (f.dirty.isEmpty() && f.written.isEmpty()) {
      if (f.overwritten && !declareClean) {
        flushDevice(f);
      }
      commitAttributes(f, declareClean);
      return;
    }
    Allocator a = ctx.allocator();
    List<Written> units = new ArrayList<>();
    List<Piece> fresh = new ArrayList<>();
    long spent = f.dirty.isEmpty() ? 0 : writeRuns(f, a, runs(f, map), map, fresh, units);
    for (Piece p : f.written.values()) {
      units.add(new Written(List.of(p), overlapped(map, p.fileBlock(), p.fileEnd())));
    }
    units.sort(Comparator.comparingLong(w -> w.pieces().get(0).fileBlock()));
    List<Piece> pieces = new ArrayList<>();
    units.forEach(w -> pieces.addAll(w.pieces()));
    List<Integer> ends = batches(units);
    // A release's one commit goes in a group, whose leader flushes the device for all of it
    // before any of the group's metadata is committed (invariant 2).
    boolean grouped = declareClean && ends.size() == 1;
    if (!grouped) {
      try {
        ctx.device.flush();
      } catch (IOException e) {
        abandon(f, a, fresh, spent);
        throw new FsException(Errno.EIO, "device flush for inode " + f.ino + ": " + e, e);
      }
    }
    commitAll(f, a, pieces, ends, declareClean, spent, grouped);
  }

  /**
   * Write early, commit late (see the class comment): writes {@code f}'s buffered blocks to
   * fresh device blocks and gives their memory back; commits nothing, unless the file holds
   * {@link #MAX_WRITTEN} written-ahead pieces already, when it flushes. The caller holds the
   * file's lock. No committed record changes, so a failure loses nothing accepted: the blocks
   * stay buffered.
   */
  void writeOut(FileData f) throws FsException {
    land(f); // one write-out in flight per file: the buffer refills while the device writes
    reservations.settle(f);
    if (f.dirty.isEmpty()) {
      return;
    }
    guardOrDrop(f);
    List<FileExtent> map = overwriteInPlace(f);
    if (f.dirty.isEmpty()) {
      return;
    }
    List<List<Long>> runs = runs(f, map);
    if (f.written.size() + runs.size() > MAX_WRITTEN) {
      flush(f);
      return;
    }
    Allocator a = ctx.allocator();
    List<Piece> pieces = new ArrayList<>();
    long spent = allocateRuns(f, a, runs, map, pieces, new ArrayList<>(), "write-out");
    java.util.TreeMap<Long, byte[]> held = new java.util.TreeMap<>();
    for (Piece p : pieces) {
      for (long b = p.fileBlock(); b < p.fileEnd(); b++) {
        held.put(b, f.dirty.remove(b));
      }
      f.written.put(p.fileBlock(), p);
    }
    Landing l = new Landing(List.copyOf(pieces), spent, held);
    long bytes = (long) held.size() * ctx.blockSize;
    Runnable write = () -> {
      writeLanding(l);
      budget.give(bytes); // the memory is free once the blocks are on the device
    };
    try {
      l.done = CompletableFuture.runAsync(write, writers);
    } catch (java.util.concurrent.RejectedExecutionException e) { // closed: written here
      l.done = new CompletableFuture<>();
      try {
        write.run();
        l.done.complete(null);
      } catch (RuntimeException failed) {
        l.done.completeExceptionally(failed);
      }
    }
    f.landing = l;
    ctx.stats.writtenAhead.add(held.size());
  }

  /**
   * A write-out's device writes, in flight while its file's writer goes on (at most one per
   * file): its pieces are in {@code FileData.written} already, allocated to this node and
   * referenced by nothing committed; {@code held} keeps their data until they land. Whatever
   * reads, commits, carries, drops or cuts written-ahead pieces calls {@link #land} first, under
   * the file's lock, so no commit maps a block before its data is written (invariant 2) and no
   * block goes back to the allocator while a write to it may still land (invariant 1).
   */
  static final class Landing {
    final List<Piece> pieces;
    final long spent;
    final java.util.TreeMap<Long, byte[]> held;
    volatile CompletableFuture<Void> done;

    Landing(List<Piece> pieces, long spent, java.util.TreeMap<Long, byte[]> held) {
      this.pieces = pieces;
      this.spent = spent;
      this.held = held;
    }

    /** Whether file blocks [{@code from}, {@code to}) meet a block of this write-out. */
    boolean overlaps(long from, long to) {
      var first = held.ceilingKey(from);
      return first != null && first < to;
    }
  }

  /** On a writer thread: each piece gathered into one buffer and written. */
  private void writeLanding(Landing l) {
    for (Piece p : l.pieces) {
      int len = (int) p.dev().length() * ctx.blockSize;
      ByteBuffer buf = gatherBuffer.get();
      if (buf.capacity() < len) {
        buf = ByteBuffer.allocateDirect(len);
        gatherBuffer.set(buf);
      }
      buf.clear();
      for (long b = p.fileBlock(); b < p.fileEnd(); b++) {
        buf.put(l.held.get(b));
      }
      buf.flip();
      try {
        ctx.device.write(buf, p.dev().start() * ctx.blockSize);
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }
  }

  /**
   * Waits until {@code f}'s write-out in flight, if any, is on the device; under f's lock. If
   * its device write failed, its data goes back into the buffer and its blocks back to the
   * allocator (nothing references them), so the next flush writes it again and reports what
   * fails then: nothing a write accepted is lost here.
   */
  void land(FileData f) {
    Landing l = f.landing;
    if (l == null) {
      return;
    }
    f.landing = null;
    if (!l.done.isDone()) {
      ctx.stats.writeOutWaits.increment();
    }
    try {
      l.done.join(); // not interruptible: no block may be let go while a write to it can land
    } catch (java.util.concurrent.CompletionException | java.util.concurrent.CancellationException e) {
      for (Piece p : l.pieces) {
        f.written.remove(p.fileBlock(), p);
      }
      f.dirty.putAll(l.held); // still counted in the budget: given back only once landed
      try {
        abandon(f, ctx.allocator(), l.pieces, l.spent);
      } catch (FsException | RuntimeException ex) {
        // no allocator bound: the next claim's rebuild finds these blocks unreferenced
      }
      LOG.warning("inode " + f.ino + ": writing " + l.held.size() + " blocks ahead of their"
          + " commit failed (" + e.getCause() + "); they stay buffered for the next flush");
    }
  }

  /** Written-ahead pieces replace their dirty blocks in memory. */
  private void keepWritten(FileData f, List<Piece> pieces) {
    for (Piece p : pieces) {
      for (long b = p.fileBlock(); b < p.fileEnd(); b++) {
        f.dirty.remove(b);
      }
      budget.give(p.dev().length() * ctx.blockSize);
      f.written.put(p.fileBlock(), p);
    }
    ctx.stats.writtenAhead.add(pieces.stream().mapToLong(p -> p.dev().length()).sum());
  }

  /** The most pieces a file's buffer may lie in and still be carried by its create. */
  static final int MAX_CARRIED = 4;

  /**
   * What the transaction that creates a file carries of its buffer: a create queued under a
   * directory delegation whose file's last close came before it was committed ({@link
   * Delegations}). The written-ahead pieces, the size and the attribute changes, taken under the
   * file's lock; nothing of the buffer is in memory or overwritten in place.
   */
  record Carried(List<Piece> pieces, long end, PendingAttrs attrs) {}

  /**
   * At the last close of a file whose create is queued here, under its lock: writes what it
   * buffered to fresh device blocks, so that its create can carry it. No guards: its lock is
   * provisional — no other node can know the file, and the transaction that creates it carries
   * the directory's guards. A failure loses nothing: the blocks stay buffered.
   *
   * @return whether the whole buffer can be carried ({@link #carried})
   */
  boolean writeAheadForCreate(FileData f) throws FsException {
    land(f);
    reservations.settle(f);
    if (f.overwritten) {
      return false;
    }
    if (!f.dirty.isEmpty()) {
      List<List<Long>> runs = runs(f, List.of());
      if (f.written.size() + runs.size() > MAX_CARRIED) {
        return false;
      }
      List<Piece> pieces = new ArrayList<>();
      writeRuns(f, ctx.allocator(), runs, List.of(), pieces, new ArrayList<>());
      keepWritten(f, pieces);
    }
    return f.written.size() <= MAX_CARRIED;
  }

  /** {@code f}'s buffer as its create carries it, or null if it cannot; under f's lock. */
  Carried carried(FileData f) {
    land(f);
    if (!f.dirty.isEmpty() || f.overwritten || f.written.size() > MAX_CARRIED) {
      return null;
    }
    return new Carried(List.copyOf(f.written.values()), f.pendingEnd, f.pendingAttrs);
  }

  /**
   * The record a create carrying {@code c} commits: {@code created} with the data's size,
   * blocks and times (as a data commit sets them) and the buffered attribute changes.
   */
  static Inode withCarried(Inode created, Carried c) {
    Inode i = created;
    if (c.end() >= 0) {
      long now = Ctx.now();
      long blocks = c.pieces().stream().mapToLong(p -> p.dev().length()).sum();
      i = i.withSize(Math.max(i.size(), c.end()), blocks).withTimes(i.atimeNs(), now, now);
    }
    return c.attrs() == null ? i : c.attrs().applyTo(i);
  }

  /**
   * Adds {@code c}'s extents and the allocator's record of them (invariant 1) to the
   * transaction that creates {@code ino}; returns the file's map once it commits.
   */
  ExtentChunks carry(io.etcfs.core.fs.tx.MetaTx tx, long ino, Carried c) throws FsException {
    if (c.pieces().isEmpty()) {
      return ExtentChunks.empty();
    }
    ExtentChunks.Change change = ExtentChunks.empty()
        .overwrite(c.pieces().stream().map(Piece::mapping).toList());
    extents.apply(tx, ino, change);
    extents.allocate(tx, ino, c.pieces().stream().map(Piece::dev).toList(), List.of());
    return change.after();
  }

  /** The create that carried {@code c} committed: that much is no longer buffered; under f's lock. */
  static void carriedCommitted(FileData f, Carried c) {
    forgetCarried(f, c);
    if (f.pendingAttrs == c.attrs()) {
      f.pendingAttrs = null;
    }
    if (f.dirty.isEmpty() && f.written.isEmpty()) {
      f.pendingEnd = -1;
    }
  }

  /**
   * Takes {@code c}'s pieces out of {@code f}'s buffer without giving their blocks back: after
   * its create committed, or when nobody knows whether it did (they may be mapped now, so they
   * must never be committed again nor handed to another file; their blocks stay taken until the
   * allocator next reads what is referenced). Under f's lock.
   */
  static void forgetCarried(FileData f, Carried c) {
    c.pieces().forEach(p -> f.written.remove(p.fileBlock(), p));
  }

  /**
   * Invariant 4: without its exclusive lock this node writes nothing more for the file, and
   * what it buffered under the lock is dropped.
   */
  private void guardOrDrop(FileData f) throws FsException {
    try {
      locks.checkCommittable(f.ino);
    } catch (FsException e) {
      drop(f);
      throw e;
    }
  }

  /**
   * Allocates and writes every run of dirty blocks to fresh blocks, adding them to {@code
   * pieces} and, one unit per run, to {@code units}; on a failure gives back what it took.
   *
   * @return how much of the file's promise the allocations spent
   */
  private long writeRuns(FileData f, Allocator a, List<List<Long>> runs, List<FileExtent> map,
      List<Piece> pieces, List<Written> units) throws FsException {
    long spent = allocateRuns(f, a, runs, map, pieces, units, "flush");
    try {
      for (Piece p : pieces) {
        ctx.device.write(gathered(f, p.fileBlock(), p.dev().length()),
            p.dev().start() * ctx.blockSize);
      }
      return spent;
    } catch (IOException e) {
      abandon(f, a, pieces, spent);
      throw new FsException(Errno.EIO, "device write for inode " + f.ino + ": " + e, e);
    } catch (RuntimeException e) {
      abandon(f, a, pieces, spent);
      throw e;
    }
  }

  /**
   * Allocates fresh blocks for every run of dirty blocks, adding them to {@code pieces} and, one
   * unit per run, to {@code units}; on a failure gives back what it took. {@code when} names the
   * step in an ENOSPC message.
   *
   * @return how much of the file's promise the allocations spent
   */
  private long allocateRuns(FileData f, Allocator a, List<List<Long>> runs,
      List<FileExtent> map, List<Piece> pieces, List<Written> units, String when)
      throws FsException {
    long spent = 0;
    try {
      for (List<Long> run : runs) {
        int from = pieces.size();
        spent += allocate(f, a, run, goal(f, map, pieces, run.get(0)), pieces);
        units.add(new Written(List.copyOf(pieces.subList(from, pieces.size())),
            overlapped(map, run.get(0), run.get(run.size() - 1) + 1)));
      }
      return spent;
    } catch (NoSpaceException e) {
      abandon(f, a, pieces, spent);
      throw reservations.logged(new FsException(Errno.ENOSPC, "no space for inode " + f.ino
          + " at its " + when + ": " + e.getMessage()));
    } catch (RuntimeException e) {
      abandon(f, a, pieces, spent);
      throw e;
    }
  }

  /**
   * Drops everything {@code f} buffered, and the space promised to it: the lock is lost, or the
   * last close could not commit it. The caller holds the file's lock.
   */
  void drop(FileData f) {
    land(f); // invariant 1: its blocks go back to the allocator only once nothing can land
    budget.give((long) f.dirty.size() * ctx.blockSize);
    ctx.settles.incrementAndGet();
    f.dirty.clear();
    unwrite(f, 0, Long.MAX_VALUE);
    f.pendingEnd = -1;
    f.pendingAttrs = null;
    f.overwritten = false;
    reservations.settle(f);
  }

  /**
   * Takes file blocks [{@code from}, {@code to}) out of the written-ahead pieces, keeping the
   * parts of the pieces around them, and gives their device blocks back: nothing committed
   * references them (a truncate, a lost lock, a write that buffers a block again).
   */
  void unwrite(FileData f, long from, long to) {
    land(f);
    Piece across = f.writtenAt(from);
    var hit = f.written.subMap(across != null ? across.fileBlock() : from, true, to, false);
    List<Piece> cut = List.copyOf(hit.values());
    hit.clear();
    List<Extent> gone = new ArrayList<>();
    for (Piece p : cut) {
      long start = Math.max(from, p.fileBlock());
      long end = Math.min(to, p.fileEnd());
      if (p.fileBlock() < start) {
        f.written.put(p.fileBlock(),
            new Piece(p.fileBlock(), new Extent(p.dev().start(), start - p.fileBlock())));
      }
      if (end < p.fileEnd()) {
        f.written.put(end, new Piece(end, new Extent(p.deviceBlock(end), p.fileEnd() - end)));
      }
      gone.add(new Extent(p.deviceBlock(start), end - start));
    }
    giveBack(gone);
  }

  private void giveBack(List<Extent> gone) {
    if (gone.isEmpty()) {
      return;
    }
    try {
      ctx.allocator().abandon(gone);
    } catch (FsException e) {
      // no allocator bound: the next claim's rebuild finds these blocks unreferenced, so free
    }
  }

  /**
   * Commits buffered chmod, chown and utimens, and the size and times of data written in place
   * (nothing else of the data is buffered). The device was flushed first, unless the commit goes
   * in a release group, whose leader flushes it.
   */
  private void commitAttributes(FileData f, boolean declareClean) throws FsException {
    PendingAttrs pending = f.pendingAttrs;
    boolean data = f.overwritten;
    long end = f.pendingEnd;
    io.etcfs.core.fs.tx.TxBody<Void> body = tx -> {
      locks.fence(tx, f.ino, declareClean);
      Inode i = Records.inode(tx.get(ctx.keys.inode(f.ino)), f.ino);
      if (data) {
        long now = Ctx.now();
        i = i.withSize(Math.max(i.size(), end), i.blocks()).withTimes(i.atimeNs(), now, now);
      }
      tx.put(ctx.keys.inode(f.ino),
          io.etcfs.core.fs.meta.Codec.inode(pending == null ? i : pending.applyTo(i)));
      return null;
    };
    String what = "commit attributes of inode " + f.ino;
    if (declareClean) {
      releases.run(what, body);
    } else {
      ctx.tx.run(what, body);
    }
    ctx.settles.incrementAndGet();
    if (f.pendingAttrs == pending) {
      f.pendingAttrs = null;
    }
    if (data) {
      f.overwritten = false;
      f.pendingEnd = -1;
    }
  }

  private void flushDevice(FileData f) throws FsException {
    try {
      ctx.device.flush();
    } catch (IOException e) {
      throw new FsException(Errno.EIO, "device flush for inode " + f.ino + ": " + e, e);
    }
  }

  /**
   * Overwrites in place (docs/ARCHITECTURE.md, "Overwrites in place"): each run of dirty blocks
   * that the committed map already gives this file, on device blocks the allocator permits
   * ({@link Allocator#overwrite}), is written over them now; no block is allocated and no extent
   * changes, so the commit that follows carries only the size and times, and a file rewritten at
   * random keeps its extents instead of one per block. The exclusive lock is checked after each
   * permit and before its write: the permit keeps the blocks this file's until the write returned,
   * and a lock that lapsed before is seen. Only blocks wholly below the committed size: a crash
   * never leaves bytes past it that no commit wrote, which a later extension would show. What is
   * left dirty goes to fresh blocks as before. The caller holds the file's lock.
   *
   * @return the committed extent map it worked from, for what is left
   */
  private List<FileExtent> overwriteInPlace(FileData f) throws FsException {
    Extents.Snapshot committed = extents.snapshot(f.ino);
    List<FileExtent> map = committed.chunks().extents();
    // blocks [0, whole) lie wholly below the committed size
    long whole = committed.inode().size() / ctx.blockSize;
    if (f.dirty.isEmpty() || map.isEmpty() || whole == 0) {
      return map;
    }
    List<FileExtent> runs = new ArrayList<>();
    FileExtent run = null;
    for (long b : f.dirty.headMap(whole).keySet()) {
      int idx = ExtentMap.find(map, b);
      if (idx < 0) {
        continue;
      }
      FileExtent e = map.get(idx);
      long dev = e.deviceBlock() + b - e.fileBlock();
      if (run != null && run.fileEnd() == b && run.deviceBlock() + run.length() == dev
          && run.length() < MAX_RUN) {
        run = new FileExtent(run.fileBlock(), run.deviceBlock(), run.length() + 1);
        continue;
      }
      if (run != null) {
        runs.add(run);
      }
      run = new FileExtent(b, dev, 1);
    }
    if (run != null) {
      runs.add(run);
    }
    Allocator a = ctx.allocator();
    long done = 0;
    for (FileExtent r : runs) {
      Allocator.InPlace permit = a.overwrite(f.ino, r.device());
      if (permit == null) {
        continue;
      }
      try {
        guardOrDrop(f);
        ctx.device.write(gathered(f, r.fileBlock(), r.length()),
            r.deviceBlock() * ctx.blockSize);
      } catch (IOException e) {
        // the blocks stay buffered; what reached the device is this file's own block
        throw new FsException(Errno.EIO, "device write for inode " + f.ino + ": " + e, e);
      } finally {
        permit.close();
      }
      f.overwritten = true;
      for (long b = r.fileBlock(); b < r.fileEnd(); b++) {
        f.dirty.remove(b);
      }
      budget.give(r.length() * ctx.blockSize);
      done += r.length();
    }
    if (done > 0) {
      ctx.stats.overwrittenInPlace.add(done);
      reservations.settle(f); // those needed no fresh block
    }
    return map;
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

  /** Committed extents that file blocks [from, to) fall in (a run is consecutive blocks). */
  private static int overlapped(List<FileExtent> map, long from, long to) {
    int idx = ExtentMap.find(map, from);
    int count = 0;
    for (int i = idx >= 0 ? idx : -idx - 1; i < map.size() && map.get(i).fileBlock() < to; i++) {
      count++;
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
        commit(f, a, batch, end == pieces.size(), declareClean && end == pieces.size(), grouped);
      } catch (OutcomeUnknownException e) {
        // This batch may be committed: its blocks stay allocated, so their promise is spent.
        abandon(f, a, fresh(f, pieces.subList(end, pieces.size())), spent);
        reload(f, batch);
        throw e;
      } catch (FsException | RuntimeException e) {
        // Written-ahead pieces stay: the next flush maps them, or a drop gives them back.
        abandon(f, a, fresh(f, pieces.subList(i, pieces.size())), spent);
        throw e;
      }
      for (Piece p : batch) {
        if (ahead(f, p)) {
          f.written.remove(p.fileBlock());
          continue;
        }
        for (long b = p.fileBlock(); b < p.fileEnd(); b++) {
          f.dirty.remove(b);
          budget.give(ctx.blockSize);
        }
      }
      i = end;
    }
    ctx.settles.incrementAndGet();
    if (f.dirty.isEmpty() && f.written.isEmpty()) {
      f.pendingEnd = -1;
      f.pendingAttrs = null; // every batch carried them; the last one is in
      f.overwritten = false; // the last batch carried the size and times of those too
    }
  }

  /** The pieces this flush allocated (not written ahead by an earlier write-out). */
  private static List<Piece> fresh(FileData f, List<Piece> pieces) {
    return pieces.stream().filter(p -> !ahead(f, p)).toList();
  }

  /** Whether {@code p} is one of {@code f}'s written-ahead pieces (not allocated by this flush). */
  private static boolean ahead(FileData f, Piece p) {
    return f.written.get(p.fileBlock()) == p;
  }

  /**
   * A commit whose outcome is unknown carried {@code batch}: its written-ahead pieces may be
   * mapped now, so they must never be committed again (their blocks would be released while
   * mapped). Their data goes back into memory, as a flush's own blocks stay buffered, and the
   * next flush maps it to fresh blocks; the old ones stay allocated, freed by that commit if
   * they were mapped.
   */
  private void reload(FileData f, List<Piece> batch) {
    for (Piece p : batch) {
      if (!ahead(f, p)) {
        continue;
      }
      f.written.remove(p.fileBlock());
      ByteBuffer buf = ByteBuffer.allocate((int) p.dev().length() * ctx.blockSize);
      try {
        ctx.device.read(buf, p.dev().start() * ctx.blockSize);
      } catch (IOException e) {
        LOG.warning("inode " + f.ino + ": written-ahead blocks " + p.mapping()
            + " lost after a commit of unknown outcome: " + e);
        continue;
      }
      for (long b = p.fileBlock(); b < p.fileEnd(); b++) {
        byte[] block = new byte[ctx.blockSize];
        System.arraycopy(buf.array(), (int) (b - p.fileBlock()) * ctx.blockSize, block, 0,
            ctx.blockSize);
        f.dirty.put(b, block);
        budget.take(ctx.blockSize);
      }
    }
  }

  private void commit(FileData f, Allocator a, List<Piece> batch, boolean last, boolean clean,
      boolean grouped) throws FsException {
    List<FileExtent> added = batch.stream().map(Piece::mapping).toList();
    List<Extent> referenced = batch.stream().map(Piece::dev).toList();
    long end = added.get(added.size() - 1).fileEnd() * ctx.blockSize;
    io.etcfs.core.fs.tx.TxBody<Void> body = tx -> {
      locks.fence(tx, f.ino, clean);
      Inode i = Records.inode(tx.get(ctx.keys.inode(f.ino)), f.ino);
      ExtentChunks.Change change = extents.read(tx, f.ino).overwrite(added);
      List<Extent> released = extents.apply(tx, f.ino, change);
      // The last batch: every buffered block is on the device now (blocks overwritten in place
      // may lie past its pieces), so the size is all that was written.
      long size = Math.max(i.size(), last ? f.pendingEnd : Math.min(f.pendingEnd, end));
      long blocks = i.blocks() + ExtentMap.blocks(added) - ExtentMap.blocks(change.removed());
      long now = Ctx.now();
      Inode written = i.withSize(size, blocks).withTimes(i.atimeNs(), now, now);
      PendingAttrs pending = f.pendingAttrs;
      extents.putInode(tx, pending == null ? written : pending.applyTo(written), change.after());
      extents.allocate(tx, a, f.ino, referenced, released);
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
  private static long goal(FileData f, List<FileExtent> map, List<Piece> pieces, long block) {
    if (!pieces.isEmpty()) {
      Piece last = pieces.get(pieces.size() - 1);
      if (last.fileEnd() == block) {
        return last.dev().end();
      }
    }
    Piece ahead = f.writtenAt(block - 1);
    if (ahead != null) {
      return ahead.deviceBlock(block);
    }
    int idx = ExtentMap.find(map, block - 1);
    int before = idx >= 0 ? idx : -idx - 2;
    if (before < 0) {
      return -1;
    }
    FileExtent e = map.get(before);
    return e.deviceBlock() + Math.min(e.length(), block - e.fileBlock());
  }

  /** Allocates blocks for {@code run}, adding its pieces; returns the promise spent. */
  private long allocate(FileData f, Allocator a, List<Long> run, long goal, List<Piece> pieces)
      throws NoSpaceException {
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
      throw new IllegalStateException("allocator returned " + got + " for " + run.size()
          + " blocks");
    }
    long fileBlock = run.get(0);
    for (Extent dev : got) {
      pieces.add(new Piece(fileBlock, dev));
      fileBlock += dev.length();
    }
    return spent;
  }

  /** Dirty blocks [{@code from}, {@code from + count}) in one buffer, ready to write. */
  private ByteBuffer gathered(FileData f, long from, long count) {
    ByteBuffer buf = ByteBuffer.allocate((int) count * ctx.blockSize);
    for (long b = from; b < from + count; b++) {
      buf.put(f.dirty.get(b));
    }
    return buf.flip();
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

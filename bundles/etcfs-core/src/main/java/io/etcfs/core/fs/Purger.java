package io.etcfs.core.fs;

import io.etcfs.core.fs.meta.Codec;
import io.etcfs.core.fs.meta.ExtentChunks;
import io.etcfs.core.fs.meta.ExtentMap;
import io.etcfs.core.fs.meta.FileExtent;
import io.etcfs.core.fs.meta.Inode;
import io.etcfs.core.fs.tx.MetaTx;
import io.etcfs.spi.alloc.Allocator;
import io.etcfs.spi.alloc.Extent;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.vfs.FsException;
import java.util.List;
import java.util.Optional;
import java.util.logging.Logger;

/**
 * Removes inodes whose last link is gone, releasing their blocks through the allocator in the
 * same transaction that unmaps them. A large file is taken apart from its end in bounded steps
 * (etcd's 128 operations per transaction); until the last step its {@code orphans/<ino>} key
 * says that it still holds blocks, so recovery can finish the job after a crash.
 */
final class Purger {
  private static final Logger LOG = Logger.getLogger(Purger.class.getName());
  /** Extents released by one transaction: with chunk keys and inode well under 128 ops. */
  static final int STEP_EXTENTS = 32;
  /**
   * Operations one purge transaction may spend on the allocator's records: etcd allows 128 per
   * transaction, and the inode, orphan, chunk keys and guards need the rest.
   */
  static final int ALLOCATOR_OPS = 96;

  private final Ctx ctx;
  private final Extents extents;

  Purger(Ctx ctx, Extents extents) {
    this.ctx = ctx;
    this.extents = extents;
  }

  /**
   * Deletes the inode in {@code tx} if its blocks fit in one transaction: the unlink of its last
   * name. It has no orphan key (one is written only when the last name goes while the file is
   * open, and a file with no name cannot be linked again), so none is deleted: an unlink batch
   * spends one operation less per file.
   */
  boolean removeNow(MetaTx tx, long ino) throws FsException {
    ExtentChunks chunks = extents.read(tx, ino);
    if (chunks.extents().size() > STEP_EXTENTS) {
      return false;
    }
    return deleteAll(tx, ino, chunks, false);
  }

  /**
   * Deletes the inode and releases all its blocks in {@code tx}, if the allocator's records of
   * them fit (their number is not the number of extents: the allocator may record one extent
   * of the map in several pieces).
   */
  private boolean deleteAll(MetaTx tx, long ino, ExtentChunks chunks, boolean orphan)
      throws FsException {
    List<Extent> released = chunks.extents().stream().map(FileExtent::device).toList();
    Allocator a = ctx.allocator();
    List<io.etcfs.spi.meta.Op> ops = released.isEmpty() ? List.of()
        : a.commitOps(ino, List.of(), released);
    if (ops.size() > ALLOCATOR_OPS) {
      return false;
    }
    tx.delete(ctx.keys.inode(ino));
    tx.delete(ctx.keys.inodeFence(ino));
    tx.deletePrefix(ctx.keys.extentPrefix(ino));
    tx.deletePrefix(ctx.keys.xattrPrefix(ino));
    if (orphan) {
      tx.delete(ctx.keys.orphan(ino));
    }
    extents.record(tx, a, List.of(), released, ops);
    return true;
  }

  /** After a commit: purge now, and leave the orphan key for recovery if that fails. */
  void later(long ino) {
    try {
      purge(ino);
    } catch (FsException | RuntimeException e) {
      LOG.warning("orphan inode " + ino + " not purged yet: " + e.getMessage());
    }
  }

  /** Purges an inode with no links left (nothing if it has links again or is gone). */
  void purge(long ino) throws FsException {
    boolean done = false;
    while (!done) {
      done = ctx.tx.run("purge inode " + ino, tx -> step(tx, ino));
    }
  }

  private boolean step(MetaTx tx, long ino) throws FsException {
    Optional<KeyValue> kv = tx.get(ctx.keys.inode(ino));
    if (kv.isEmpty()) {
      if (tx.peek(ctx.keys.orphan(ino)).isPresent()) {
        tx.delete(ctx.keys.orphan(ino));
      }
      return true;
    }
    Inode inode = Records.inode(kv, ino);
    if (inode.nlink() > 0) {
      return true;
    }
    ExtentChunks chunks = extents.read(tx, ino);
    if (chunks.extents().size() <= STEP_EXTENTS && deleteAll(tx, ino, chunks, true)) {
      return true;
    }
    List<FileExtent> all = chunks.extents();
    long end = all.get(all.size() - 1).fileBlock() + all.get(all.size() - 1).device().length();
    long from = chunks.tailStep(0, STEP_EXTENTS);
    Allocator a = ctx.allocator();
    while (true) {
      ExtentChunks.Change change = chunks.replace(from, Long.MAX_VALUE, List.of());
      List<Extent> released = change.removed().stream().map(FileExtent::device).toList();
      List<io.etcfs.spi.meta.Op> ops = a.commitOps(ino, List.of(), released);
      if (ops.size() <= ALLOCATOR_OPS || end - from <= 1) {
        extents.apply(tx, ino, change);
        long blocks = inode.blocks() - ExtentMap.blocks(change.removed());
        long size = Math.min(inode.size(), from * ctx.blockSize);
        tx.put(ctx.keys.inode(ino), Codec.inode(inode.withSize(size, Math.max(0, blocks))));
        extents.record(tx, a, List.of(), released, ops);
        return false;
      }
      // Too many records for one transaction: take a smaller tail.
      from = end - (end - from) / 2;
    }
  }
}

package io.etcfs.core.fs;

import io.etcfs.core.fs.cache.MetaCache;
import io.etcfs.core.fs.meta.Codec;
import io.etcfs.core.fs.meta.ExtentChunks;
import io.etcfs.core.fs.meta.FileExtent;
import io.etcfs.core.fs.meta.Inode;
import io.etcfs.core.fs.tx.MetaTx;
import io.etcfs.spi.alloc.Allocator;
import io.etcfs.spi.alloc.Extent;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.RangeResult;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Reads extent maps. Every transaction that changes a file's extent chunks also rewrites its
 * inode, so the inode's mod revision versions the whole map: inside a transaction the inode's
 * compare guards the (uncomparable) range read, and a cached map is valid exactly while the
 * inode's revision is the one it was read with.
 */
final class Extents {
  /** An inode and its extent map as of one inode revision. */
  record Snapshot(Inode inode, long revision, ExtentChunks chunks) {}

  private final Ctx ctx;

  Extents(Ctx ctx) {
    this.ctx = ctx;
  }

  /**
   * The map inside a transaction: guarded by the inode's revision, which the transaction reads
   * (and compares); the cached snapshot of that same revision is that same map.
   */
  ExtentChunks read(MetaTx tx, long ino) throws FsException {
    Optional<KeyValue> kv = tx.get(ctx.keys.inode(ino));
    if (kv.isPresent() && ctx.cache.peekGroup(MetaCache.extentsSlot(ino)) instanceof Snapshot s
        && s.revision() == kv.get().modRevision()) {
      return s.chunks();
    }
    byte[] p = ctx.keys.extentPrefix(ino);
    return decode(tx.range(p, Keys.prefixEnd(p), 0), ino);
  }

  /** The cached snapshot, reloaded when the (watch-coherent) inode moved on. */
  Snapshot snapshot(long ino) throws FsException {
    Optional<KeyValue> kv = ctx.cache.get(ctx.keys.inode(ino));
    Records.inode(kv, ino);
    long rev = kv.get().modRevision();
    long slot = MetaCache.extentsSlot(ino);
    Snapshot s = ctx.cache.group(slot, () -> load(ino));
    if (s.revision() == rev) {
      return s;
    }
    ctx.cache.invalidateGroup(slot);
    return ctx.cache.group(slot, () -> load(ino));
  }

  /** A consistent pair: the inode read before and after the range is the same revision. */
  private Snapshot load(long ino) throws FsException {
    for (int i = 0; i < 16; i++) {
      Optional<KeyValue> before = ctx.store.get(ctx.keys.inode(ino));
      Inode inode = Records.inode(before, ino);
      byte[] p = ctx.keys.extentPrefix(ino);
      ExtentChunks chunks = decode(ctx.store.range(p, Keys.prefixEnd(p), 0), ino);
      Optional<KeyValue> after = ctx.store.get(ctx.keys.inode(ino));
      if (after.isPresent() && after.get().modRevision() == before.get().modRevision()) {
        return new Snapshot(inode, before.get().modRevision(), chunks);
      }
    }
    throw new FsException(Errno.EIO, "extent map of " + ino + " keeps changing");
  }

  private ExtentChunks decode(RangeResult r, long ino) throws FsException {
    Map<Long, List<FileExtent>> chunks = new TreeMap<>();
    for (KeyValue kv : r.kvs()) {
      String rel = ctx.keys.relative(kv.keyString());
      long first;
      try {
        first = Long.parseUnsignedLong(rel.substring(19), 16);
      } catch (RuntimeException e) {
        throw new FsException(Errno.EIO, "bad extent key " + kv.keyString());
      }
      List<FileExtent> list = Records.decode(kv, Codec::decodeExtents);
      if (list.get(0).fileBlock() != first) {
        throw new FsException(Errno.EIO, "extent chunk " + kv.keyString() + " starts elsewhere");
      }
      chunks.put(first, list);
    }
    return new ExtentChunks(chunks);
  }

  /**
   * Writes the inode of a file whose map is {@code after} once this transaction commits, and
   * caches the pair as of the commit's revision, so the writer's next read needs no round trip.
   */
  void putInode(MetaTx tx, Inode inode, ExtentChunks after) {
    tx.put(ctx.keys.inode(inode.ino()), Codec.inode(inode));
    tx.afterCommitAt(revision -> ctx.cache.putGroup(MetaCache.extentsSlot(inode.ino()),
        new Snapshot(inode, revision, after)));
  }

  /** Writes a change's chunk keys; returns the device extents it unmapped. */
  List<Extent> apply(MetaTx tx, long ino, ExtentChunks.Change change) {
    change.puts().forEach((k, v) -> tx.put(ctx.keys.extentChunk(ino, k), Codec.extents(v)));
    change.deletes().forEach(k -> tx.delete(ctx.keys.extentChunk(ino, k)));
    return change.removed().stream().map(FileExtent::device).toList();
  }

  /**
   * Adds the allocator's record of the change to the transaction (invariant 1: the reverse map
   * changes with the extent map, atomically) and tells it the outcome after the commit.
   */
  void allocate(MetaTx tx, long ino, List<Extent> referenced, List<Extent> released)
      throws FsException {
    if (referenced.isEmpty() && released.isEmpty()) {
      return;
    }
    record(tx, referenced, released, ctx.allocator().commitOps(ino, referenced, released));
  }

  /** Like {@link #allocate} with the allocator's operations already computed. */
  void record(MetaTx tx, List<Extent> referenced, List<Extent> released, List<Op> ops)
      throws FsException {
    if (referenced.isEmpty() && released.isEmpty()) {
      return;
    }
    Allocator a = ctx.allocator();
    tx.ops(ops);
    tx.afterCommitAt(revision -> a.committed(referenced, released, revision));
  }
}

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
import io.etcfs.spi.meta.Txn;
import io.etcfs.spi.meta.TxnResult;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import java.util.ArrayList;
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

  /** Files whose create is queued here (directory delegation): their record, else null. */
  private volatile java.util.function.LongFunction<Inode> queued = ino -> null;

  void setQueued(java.util.function.LongFunction<Inode> queued) {
    this.queued = queued;
  }

  /** The cached snapshot, reloaded when the (watch-coherent) inode moved on. */
  Snapshot snapshot(long ino) throws FsException {
    Inode q = queued.apply(ino);
    if (q != null) {
      return new Snapshot(q, 0, ExtentChunks.empty()); // nothing of it is committed yet
    }
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

  /** A consistent pair: the inode and its extent map, read in one transaction (one revision). */
  private Snapshot load(long ino) throws FsException {
    Snapshot s = loadAll(List.of(ino)).get(ino);
    if (s == null) {
      Records.inode(Optional.empty(), ino); // ENOENT, as a read of the inode alone says
    }
    return s;
  }

  /**
   * The snapshots of {@code inos} (at most {@link #BATCH}) in one read-only transaction, whose
   * reads all see one revision: each inode with its extent map as of that inode's revision.
   * Inodes that are gone are left out.
   */
  private Map<Long, Snapshot> loadAll(List<Long> inos) throws FsException {
    Txn read = new Txn();
    for (long ino : inos) {
      byte[] key = ctx.keys.inode(ino);
      byte[] p = ctx.keys.extentPrefix(ino);
      read.then(new Op.Range(key, Keys.after(key), 1)).then(Op.rangePrefix(p));
    }
    TxnResult r = ctx.store.commit(read);
    Map<Long, Snapshot> out = new java.util.HashMap<>();
    for (int i = 0; i < inos.size(); i++) {
      List<KeyValue> inode = r.ranges().get(2 * i).kvs();
      if (inode.isEmpty()) {
        continue;
      }
      long ino = inos.get(i);
      Optional<KeyValue> kv = Optional.of(inode.get(0));
      out.put(ino, new Snapshot(Records.inode(kv, ino), kv.get().modRevision(),
          decode(r.ranges().get(2 * i + 1), ino)));
    }
    return out;
  }

  /** The most inodes {@link #prime} reads in one transaction (two reads each; etcd allows 128). */
  static final int BATCH = 64;

  /**
   * Caches the extent maps of {@code inos} that are not cached as of their inode's current
   * revision, in one round trip: a reader that is about to open them (the siblings of a file it
   * opened) then reads each without one. A hint: a map cached here that an event or a newer
   * revision made stale is found so by {@link #snapshot} and read again.
   */
  void prime(List<Long> inos) throws FsException {
    List<Long> missing = new ArrayList<>();
    for (long ino : inos) {
      Optional<KeyValue> kv = ctx.cache.get(ctx.keys.inode(ino));
      if (kv.isPresent() && !(ctx.cache.peekGroup(MetaCache.extentsSlot(ino)) instanceof Snapshot s
          && s.revision() == kv.get().modRevision())) {
        missing.add(ino);
      }
      if (missing.size() == BATCH) {
        break;
      }
    }
    if (missing.isEmpty()) {
      return;
    }
    Map<Long, Long> epochs = new java.util.HashMap<>();
    missing.forEach(ino -> epochs.put(ino, ctx.cache.groupEpoch(MetaCache.extentsSlot(ino))));
    loadAll(missing).forEach((ino, s) -> ctx.cache.primeGroup(MetaCache.extentsSlot(ino), s,
        epochs.get(ino)));
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
    allocate(tx, ctx.allocator(), ino, referenced, released);
  }

  /**
   * As above, through allocator {@code a}: the one the caller's operation allocated {@code
   * referenced} from. An operation keeps the allocator it started with (a live switch rebinds
   * the core's allocator): its records and the outcome go to that one, never half to the next.
   */
  void allocate(MetaTx tx, Allocator a, long ino, List<Extent> referenced,
      List<Extent> released) {
    if (referenced.isEmpty() && released.isEmpty()) {
      return;
    }
    record(tx, a, referenced, released, a.commitOps(ino, referenced, released));
  }

  /** Like {@link #allocate} with {@code a}'s operations already computed. */
  void record(MetaTx tx, Allocator a, List<Extent> referenced, List<Extent> released,
      List<Op> ops) {
    if (referenced.isEmpty() && released.isEmpty()) {
      return;
    }
    tx.ops(ops);
    tx.afterCommitAt(revision -> a.committed(referenced, released, revision));
  }
}

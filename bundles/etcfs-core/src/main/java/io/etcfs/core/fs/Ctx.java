package io.etcfs.core.fs;

import io.etcfs.core.fs.cache.MetaCache;
import io.etcfs.core.fs.meta.FsKeys;
import io.etcfs.core.fs.tx.TxRunner;
import io.etcfs.spi.alloc.Allocator;
import io.etcfs.spi.blockdev.BlockDevice;
import io.etcfs.spi.fencing.Membership;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import java.time.Instant;
import java.util.function.Supplier;

/** What every part of the engine shares on one node. */
final class Ctx {
  final MetaStore store;
  final FsKeys keys;
  final MetaCache cache;
  final TxRunner tx;
  final Membership membership;
  final BlockDevice device;
  final int blockSize;
  final InodeNumbers inos;
  final Stats stats = new Stats();
  /**
   * Counts the moments when something this node answered from memory without committing it (a
   * file's buffered size, times, owner and mode; a queued create or a directory's queued
   * attributes) is committed or dropped: raised before the buffered value is cleared, after the
   * committed one is readable. A reply that puts buffered values on top of committed ones reads
   * it before and after and reads again if it moved, so it never pairs a committed value from
   * before a commit with a buffered one cleared by it (see FileOps#attributes).
   */
  final java.util.concurrent.atomic.AtomicLong settles =
      new java.util.concurrent.atomic.AtomicLong();
  /** Last closes being committed here, which may free space a write waits for. */
  final Releasing releasing = new Releasing();
  /** The names inodes were last seen under here, for their paths in shell output. */
  final LastNames names = new LastNames();
  /** What the front end's kernel cache is told (names, attributes, locks going). */
  final KernelNotices notices;
  private final Supplier<Allocator> allocator;

  Ctx(MetaStore store, FsKeys keys, Membership membership, Supplier<Allocator> allocator,
      BlockDevice device, int blockSize) {
    this.store = Counted.store(store, stats);
    this.keys = keys;
    this.cache = new MetaCache(this.store, keys::mirrored, keys::entryScope);
    this.tx = new TxRunner(this.store, cache, membership);
    this.notices = new KernelNotices(keys);
    tx.onCommit(notices);
    this.membership = membership;
    this.allocator = allocator;
    this.device = Counted.device(device, stats);
    this.blockSize = blockSize;
    this.inos = new InodeNumbers(this);
  }

  /** The allocator bound right now: the backend can be swapped while the node runs. */
  Allocator allocator() throws FsException {
    Allocator a = allocator.get();
    if (a == null) {
      throw new FsException(Errno.EIO, "no allocator backend is bound");
    }
    return a;
  }

  static long now() {
    Instant i = Instant.now();
    return i.getEpochSecond() * 1_000_000_000L + i.getNano();
  }
}

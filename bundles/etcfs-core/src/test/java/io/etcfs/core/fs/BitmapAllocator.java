package io.etcfs.core.fs;

import io.etcfs.spi.alloc.Allocator;
import io.etcfs.spi.alloc.Extent;
import io.etcfs.spi.alloc.NoSpaceException;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.Op;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

/**
 * A test allocator: a bitmap of the device's data blocks. Its commit ops keep a reverse map at
 * {@code /etcfs/<fs>/blocks/<start>} so tests can check that extent maps and the allocator agree.
 */
final class BitmapAllocator implements Allocator {
  private final String prefix;
  private final long first;
  private final long end;
  private final BitSet used = new BitSet();
  final List<Extent> abandoned = new ArrayList<>();
  /** Blocks promised to buffered writes: never handed out to anything else. */
  private long promised;

  BitmapAllocator(String fsName, long firstBlock, long endBlock) {
    this.prefix = "/etcfs/" + fsName + "/blocks/";
    this.first = firstBlock;
    this.end = endBlock;
  }

  /** Whether {@link #overwrite} permits writes in place over blocks this allocator handed out. */
  volatile boolean inPlace;
  /** Permits granted and not closed yet. */
  final java.util.concurrent.atomic.AtomicInteger openPermits =
      new java.util.concurrent.atomic.AtomicInteger();
  /** Runs as each permit is granted (a test's way to lose a lock at that very moment). */
  volatile Runnable onPermit = () -> { };
  /** Permits granted. */
  final java.util.concurrent.atomic.AtomicInteger permits =
      new java.util.concurrent.atomic.AtomicInteger();

  @Override
  public synchronized InPlace overwrite(long ino, Extent blocks) {
    if (!inPlace || blocks.start() < first || blocks.end() > end
        || used.nextClearBit((int) blocks.start()) < blocks.end()) {
      return null;
    }
    permits.incrementAndGet();
    openPermits.incrementAndGet();
    onPermit.run();
    return openPermits::decrementAndGet;
  }

  @Override
  public String backend() {
    return "bitmap";
  }

  @Override
  public synchronized List<Extent> allocate(long blocks, long goal, long reserved)
      throws NoSpaceException {
    long spent = Math.min(reserved, promised);
    if (freeBlocks() + spent < blocks) {
      throw new NoSpaceException("test device full");
    }
    promised -= spent;
    List<Extent> out = new ArrayList<>();
    long at = goal >= first && goal < end && !used.get((int) goal) ? goal : first;
    long left = blocks;
    while (left > 0) {
      long s = used.nextClearBit((int) at);
      if (s >= end) {
        at = first;
        continue;
      }
      long e = Math.min(Math.min(used.nextSetBit((int) s) < 0 ? end : used.nextSetBit((int) s), end),
          s + left);
      used.set((int) s, (int) e);
      out.add(new Extent(s, e - s));
      left -= e - s;
      at = e;
    }
    return out;
  }

  @Override
  public List<Op> commitOps(long ino, List<Extent> referenced, List<Extent> released) {
    List<Op> ops = new ArrayList<>();
    for (Extent e : released) {
      ops.add(Op.delete(key(e)));
    }
    for (Extent e : referenced) {
      ops.add(Op.put(key(e), (Long.toHexString(ino) + ":" + e.length())
          .getBytes(StandardCharsets.UTF_8)));
    }
    return ops;
  }

  private byte[] key(Extent e) {
    return Keys.of(prefix + String.format("%016x", e.start()));
  }

  @Override
  public void committed(List<Extent> referenced, List<Extent> released) {
    synchronized (this) {
      released.forEach(e -> used.clear((int) e.start(), (int) e.end()));
    }
  }

  @Override
  public synchronized void reserve(long blocks) throws NoSpaceException {
    if (freeBlocks() < blocks) {
      throw new NoSpaceException("test device full");
    }
    promised += blocks;
  }

  @Override
  public synchronized void unreserve(long blocks) {
    promised = Math.max(0, promised - blocks);
  }

  synchronized long promised() {
    return promised;
  }

  @Override
  public synchronized void abandon(List<Extent> extents, long keepReserved) {
    abandoned.addAll(extents);
    extents.forEach(e -> used.clear((int) e.start(), (int) e.end()));
    promised += Math.min(keepReserved, extents.stream().mapToLong(Extent::length).sum());
  }

  @Override
  public synchronized long freeBlocks() {
    return (end - first) - used.get((int) first, (int) end).cardinality() - promised;
  }

  @Override
  public long totalBlocks() {
    return end - first;
  }

  synchronized long usedBlocks() {
    return totalBlocks() - freeBlocks() - promised;
  }
}

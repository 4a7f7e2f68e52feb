package io.etcfs.core.fs;

import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One file's state on this node, shared by all its open handles: the write-back buffer of whole
 * blocks not yet committed (in memory, or written ahead to the device), and the size the
 * buffered writes imply. The lock serialises this node's reads, writes, flushes and truncations
 * of the file.
 */
final class FileData {
  final long ino;
  final ReentrantLock lock = new ReentrantLock();
  /** Dirty blocks by file block number; each a full block, zeros where never written. */
  final TreeMap<Long, byte[]> dirty = new TreeMap<>();
  /**
   * Blocks already written to fresh device blocks but not committed yet, by first file block
   * (write early, commit late: {@link Flusher#writeOut}); never a block that is also in {@link
   * #dirty}. No committed record references their device blocks, so they are this node's to
   * drop; the next commit maps them.
   */
  final TreeMap<Long, Flusher.Piece> written = new TreeMap<>();
  /**
   * Blocks were written over their committed device blocks in place ({@link Flusher}) since the
   * last commit: the device must be flushed and the size and times committed, as for any data.
   */
  boolean overwritten;
  /** The end of the furthest buffered write, or -1 with nothing buffered. */
  volatile long pendingEnd = -1;
  /** When the last buffered write was taken (ns since the epoch), for stat before a flush. */
  volatile long writtenNs;
  /** chmod, chown, utimens buffered with the data ({@link PendingAttrs}), or null. */
  volatile PendingAttrs pendingAttrs;
  /** The write-out whose device writes are in flight, or null ({@link Flusher#land}). */
  Flusher.Landing landing;
  /** Device blocks the allocator promised this buffer ({@link Reservations}); under the lock. */
  long reservedBlocks;
  /** Open handles on this node (guarded by {@link OpenFiles}). */
  int opens;

  FileData(long ino) {
    this.ino = ino;
  }

  /** Something of the file is not committed yet: data in memory or on the device, attributes. */
  boolean hasBuffered() {
    return !dirty.isEmpty() || !written.isEmpty() || overwritten || pendingAttrs != null;
  }

  /** The written-ahead piece holding file block {@code block}, or null. */
  Flusher.Piece writtenAt(long block) {
    var e = written.floorEntry(block);
    return e != null && block < e.getValue().fileEnd() ? e.getValue() : null;
  }
}

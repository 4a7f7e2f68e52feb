package io.etcfs.core.fs;

import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One file's state on this node, shared by all its open handles: the write-back buffer of whole
 * blocks not yet committed, and the size the buffered writes imply. The lock serialises this
 * node's reads, writes, flushes and truncations of the file.
 */
final class FileData {
  final long ino;
  final ReentrantLock lock = new ReentrantLock();
  /** Dirty blocks by file block number; each a full block, zeros where never written. */
  final TreeMap<Long, byte[]> dirty = new TreeMap<>();
  /** The end of the furthest buffered write, or -1 with nothing buffered. */
  volatile long pendingEnd = -1;
  /** When the last buffered write was taken (ns since the epoch), for stat before a flush. */
  volatile long writtenNs;
  /** chmod, chown, utimens buffered with the data ({@link PendingAttrs}), or null. */
  volatile PendingAttrs pendingAttrs;
  /** Device blocks the allocator promised this buffer ({@link Reservations}); under the lock. */
  long reservedBlocks;
  /** Open handles on this node (guarded by {@link OpenFiles}). */
  int opens;

  FileData(long ino) {
    this.ino = ino;
  }
}

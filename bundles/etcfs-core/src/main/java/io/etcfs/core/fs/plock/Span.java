package io.etcfs.core.fs.plock;

import io.etcfs.spi.vfs.PosixLock;

/**
 * One byte range of one owner's fcntl locks: read (shared) or write (exclusive), {@code start}
 * to {@code end} inclusive, {@code end} {@link PosixLock#EOF} for "to the end of the file".
 */
record Span(boolean write, long start, long end) {

  boolean overlaps(long from, long to) {
    return start <= to && from <= end;
  }

  /** Whether a request of another owner for [from, to] must wait for this span. */
  boolean conflicts(boolean writeWanted, long from, long to) {
    return (write || writeWanted) && overlaps(from, to);
  }

  PosixLock toLock(int pid) {
    return new PosixLock(write ? PosixLock.Type.WRITE : PosixLock.Type.READ, start, end, pid);
  }
}

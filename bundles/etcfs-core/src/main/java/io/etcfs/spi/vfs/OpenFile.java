package io.etcfs.spi.vfs;

import java.nio.ByteBuffer;

/**
 * A file opened through {@link Vfs#open} or {@link Vfs#create}. Writes may be buffered until
 * {@link #flush}, {@link #fsync} or {@link #release}; {@code fsync} returns only once the data is
 * durable on the device and the metadata that references it is committed.
 */
public interface OpenFile {
  long ino();

  /**
   * Reads at {@code offset} into {@code dst}; returns the bytes read, 0 at or past the end. The
   * buffer may wrap the kernel's request memory: it is valid only during the call.
   */
  int read(ByteBuffer dst, long offset) throws FsException;

  /**
   * Writes all of {@code src} at {@code offset} (at the end of the file under O_APPEND). The
   * buffer is valid only during the call: whatever is kept (write-back) must be copied.
   */
  int write(ByteBuffer src, long offset) throws FsException;

  /** close() of one descriptor: commit what was written. */
  void flush() throws FsException;

  void fsync(boolean dataOnly) throws FsException;

  /** The last descriptor closed. */
  void release() throws FsException;
}

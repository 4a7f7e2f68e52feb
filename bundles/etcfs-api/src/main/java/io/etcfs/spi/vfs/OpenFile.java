package io.etcfs.spi.vfs;

import java.nio.ByteBuffer;
import org.osgi.annotation.versioning.ProviderType;

/**
 * A file opened through {@link Vfs#open} or {@link Vfs#create}. Writes may be buffered until
 * {@link #flush}, {@link #fsync} or {@link #release}; {@code fsync} returns only once the data is
 * durable on the device and the metadata that references it is committed.
 *
 * <p>Implemented by the filesystem, called by front ends: a method added here is a minor change
 * for them (1.4: {@link #seek}; 1.5: {@link #fallocate}).
 */
@ProviderType
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

  /**
   * lseek(2)'s SEEK_DATA ({@code hole} false) and SEEK_HOLE ({@code hole} true), so that tools
   * that look for holes (GNU cp, tar --sparse) skip what was never written instead of reading
   * it as zeros. SEEK_DATA answers
   * the first offset at or after {@code offset} that is data; SEEK_HOLE the first at or after it
   * in a hole, the end of the file counting as one (a file without holes answers its size). The
   * answer covers every write that returned before the call, on any node, buffered or
   * committed. What is answered as a hole reads as zeros; data may hold zeros too (a
   * filesystem tracks holes at its own granularity). Needs no read access: a write-only file may
   * seek too.
   *
   * @throws FsException ENXIO when {@code offset} is negative or at or past the end of the
   *     file, or for SEEK_DATA when no data follows it
   */
  long seek(long offset, boolean hole) throws FsException;

  /** fallocate(2)'s FALLOC_FL_KEEP_SIZE. */
  int KEEP_SIZE = 0x01;
  /** fallocate(2)'s FALLOC_FL_PUNCH_HOLE (Linux requires it with {@link #KEEP_SIZE}). */
  int PUNCH_HOLE = 0x02;

  /**
   * fallocate(2) (1.5). {@code PUNCH_HOLE | KEEP_SIZE}: the range reads as zeros from then on,
   * on every node, its whole blocks are freed (SEEK_HOLE finds them, {@code st_blocks} falls),
   * the size stays and the times change as for a write. Preallocation (mode 0; {@code
   * KEEP_SIZE} alone inside the size): the holes of the range become zeroed blocks of the file,
   * committed before it returns, no byte of data changes, and mode 0 moves the size to the
   * range's end. {@code KEEP_SIZE} past the size, zeroing, collapsing and inserting ranges are
   * EOPNOTSUPP (on which glibc's posix_fallocate writes zeros itself).
   *
   * @throws FsException EBADF for a descriptor not open for writing, EINVAL for a negative
   *     offset or a length not positive, EFBIG past the largest file, ENOSPC when the device has
   *     no room for a preallocation (what was set aside so far stays), EOPNOTSUPP for the rest
   */
  void fallocate(int mode, long offset, long length) throws FsException;

  /** close() of one descriptor: commit what was written. */
  void flush() throws FsException;

  void fsync(boolean dataOnly) throws FsException;

  /** The last descriptor closed. */
  void release() throws FsException;
}

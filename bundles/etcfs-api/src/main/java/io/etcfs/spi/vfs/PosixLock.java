package io.etcfs.spi.vfs;

/**
 * A POSIX byte-range lock (fcntl {@code struct flock}) as the filesystem sees it: a type and an
 * inclusive byte range. A range "to the end of the file, however long it grows" ends at {@link
 * #EOF}.
 *
 * @param type read (shared), write (exclusive), or unlock
 * @param start the first byte, at least 0
 * @param end the last byte (inclusive), at least {@code start}; {@link #EOF} for "to the end"
 * @param pid the process that holds or asks for the lock; in an answer to {@link Vfs#getlk}, 0
 *     when the holder runs on another node (its pid would name an unrelated local process)
 */
public record PosixLock(Type type, long start, long end, int pid) {
  /** The end of a range that covers everything from its start on. */
  public static final long EOF = Long.MAX_VALUE;

  /** fcntl's {@code F_RDLCK}, {@code F_WRLCK}, {@code F_UNLCK}. */
  public enum Type {
    READ,
    WRITE,
    UNLOCK
  }

  public PosixLock {
    if (type == null) {
      throw new NullPointerException("type");
    }
  }

  /** The answer to {@link Vfs#getlk} when nothing conflicts. */
  public static PosixLock none(long start, long end) {
    return new PosixLock(Type.UNLOCK, start, end, 0);
  }

  /** Whether the range is one the filesystem accepts: 0 ≤ start ≤ end. */
  public boolean validRange() {
    return start >= 0 && end >= start;
  }
}

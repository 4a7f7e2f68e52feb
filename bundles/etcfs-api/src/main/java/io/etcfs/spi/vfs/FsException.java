package io.etcfs.spi.vfs;

/**
 * An operation failed with {@code errno}. The message says what failed for the log (naming the
 * inode or key); the caller sees only the errno.
 */
public class FsException extends Exception {
  private static final long serialVersionUID = 1L;
  private final int errno;

  public FsException(int errno, String message) {
    super(message, null, false, false);
    this.errno = errno;
  }

  public FsException(int errno, String message, Throwable cause) {
    super(message, cause, false, false);
    this.errno = errno;
  }

  public int errno() {
    return errno;
  }
}

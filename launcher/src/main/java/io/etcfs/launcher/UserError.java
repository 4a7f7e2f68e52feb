package io.etcfs.launcher;

/**
 * A failure the user can act on. The CLI prints its message as one line, {@code etcfs: <message>},
 * with no stack trace, and exits with a non-zero status.
 */
public final class UserError extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public UserError(String message) {
    super(message);
  }

  public UserError(String message, Throwable cause) {
    super(message, cause);
  }
}

package io.etcfs.spi.lock;

/** A lock was not granted within the time the caller allowed. */
public class LockTimeoutException extends Exception {
  private static final long serialVersionUID = 1L;

  public LockTimeoutException(String message) {
    super(message);
  }
}

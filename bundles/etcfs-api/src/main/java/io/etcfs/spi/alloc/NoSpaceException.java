package io.etcfs.spi.alloc;

/** The device has no free space left for the request (ENOSPC). */
public class NoSpaceException extends Exception {
  private static final long serialVersionUID = 1L;

  public NoSpaceException(String message) {
    super(message);
  }
}

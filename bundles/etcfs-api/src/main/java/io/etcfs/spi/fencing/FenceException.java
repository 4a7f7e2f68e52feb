package io.etcfs.spi.fencing;

/** A fence agent could not confirm that a node is cut off. */
public class FenceException extends Exception {
  private static final long serialVersionUID = 1L;

  public FenceException(String message, Throwable cause) {
    super(message, cause);
  }

  public FenceException(String message) {
    super(message);
  }
}

package io.etcfs.core.format;

/** A format was refused; the message is one line naming the problem. */
public final class FormatException extends Exception {
  private static final long serialVersionUID = 1L;

  public FormatException(String message) {
    super(message);
  }
}

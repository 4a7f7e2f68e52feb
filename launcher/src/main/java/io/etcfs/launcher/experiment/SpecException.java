package io.etcfs.launcher.experiment;

/** A spec the runner refuses, before any cluster starts: its message is the one line to print. */
public final class SpecException extends Exception {
  private static final long serialVersionUID = 1L;

  public SpecException(String message) {
    super(message);
  }
}

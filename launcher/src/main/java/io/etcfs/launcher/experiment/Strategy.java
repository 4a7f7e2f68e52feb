package io.etcfs.launcher.experiment;

/** One combination of strategies an experiment runs under: a lock backend and an allocator. */
public record Strategy(String lock, String alloc) {
  /** {@code LOCK/ALLOCATOR}, as a spec writes it; null if {@code s} is not of that form. */
  static Strategy parse(String s) {
    int slash = s.indexOf('/');
    if (slash <= 0 || slash == s.length() - 1 || s.indexOf('/', slash + 1) >= 0) {
      return null;
    }
    return new Strategy(s.substring(0, slash), s.substring(slash + 1));
  }

  @Override
  public String toString() {
    return lock + "/" + alloc;
  }
}

package io.etcfs.fencing.internal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Process checks for tests that kill process trees. */
final class Procs {
  private Procs() {}

  /**
   * Whether {@code pid} still runs. A killed process whose parent died before reaping it may
   * linger as a zombie under an init that does not reap: that one runs no more.
   */
  static boolean running(long pid) {
    Path stat = Path.of("/proc", Long.toString(pid), "stat");
    try {
      String s = Files.readString(stat);
      return s.charAt(s.lastIndexOf(')') + 2) != 'Z';
    } catch (IOException e) {
      return false;
    }
  }

  /** Waits up to {@code millis} for {@code pid} to stop running. */
  static boolean gone(long pid, long millis) throws InterruptedException {
    long deadline = System.nanoTime() + millis * 1_000_000;
    while (running(pid) && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    return !running(pid);
  }
}

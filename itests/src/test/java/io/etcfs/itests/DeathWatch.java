package io.etcfs.itests;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * Polls a pid every millisecond and records the wall-clock microsecond (as {@link
 * Probe#nowMicros()}) at which it was first seen gone, or a zombie: times of a node's death are
 * taken from the death itself, not from when the test sent the signal. {@code main PID} prints
 * {@code watching <µs>} once it polls, then that time, for the benchmark.
 */
final class DeathWatch implements AutoCloseable {
  private final long pid;
  private final Thread thread;
  private volatile long diedMicros = -1;

  private DeathWatch(long pid) {
    this.pid = pid;
    this.thread = new Thread(this::poll, "death-watch-" + pid);
    thread.setDaemon(true);
  }

  static DeathWatch start(long pid) {
    DeathWatch w = new DeathWatch(pid);
    w.thread.start();
    return w;
  }

  /** Whether {@code pid} is still a running process (a zombie counts as dead). */
  static boolean alive(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
      int close = stat.lastIndexOf(')');
      char state = stat.charAt(close + 2);
      return state != 'Z' && state != 'X';
    } catch (NoSuchFileException e) {
      return false;
    } catch (IOException e) {
      return false;
    }
  }

  private void poll() {
    while (alive(pid)) {
      try {
        TimeUnit.MILLISECONDS.sleep(1);
      } catch (InterruptedException e) {
        return;
      }
    }
    diedMicros = Probe.nowMicros();
  }

  /** When the pid was seen gone, waiting at most {@code timeoutMillis}; -1 if still alive. */
  long awaitDeath(long timeoutMillis) throws InterruptedException {
    thread.join(timeoutMillis);
    return diedMicros;
  }

  @Override
  public void close() {
    thread.interrupt();
  }

  public static void main(String[] args) throws InterruptedException {
    DeathWatch w = start(Long.parseLong(args[0]));
    System.out.println("watching " + Probe.nowMicros());
    System.out.println(w.awaitDeath(Long.MAX_VALUE / 2));
  }
}

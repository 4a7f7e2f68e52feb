package io.etcfs.launcher.node;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.logging.Logger;
import java.util.stream.Collectors;

/**
 * Where a node's start went: milliseconds from the process's start to each named step, for the
 * READY log line. Join latency is a benchmark figure; this says which part of it to work on.
 *
 * <p>The process's age comes from {@code /proc}: its start in clock ticks since boot
 * ({@code /proc/self/stat}) against the time since boot ({@code /proc/uptime}), both to 10 ms.
 * {@code ProcessHandle}'s start instant adds the boot time, which Linux gives in whole seconds,
 * so it was up to a second early and the READY line's {@code jvm} step up to a second too long.
 */
final class StartupClock {
  private static final Logger LOG = Logger.getLogger(StartupClock.class.getName());
  /** With {@code -Detcfs.startup.trace=true} each step is logged as it happens. */
  private static final boolean TRACE = Boolean.getBoolean("etcfs.startup.trace");

  private final long startNanos = System.nanoTime() - ageNanos();
  private final Map<String, Long> marks = new LinkedHashMap<>();
  private long last = startNanos;

  synchronized void mark(String step) {
    long now = System.nanoTime();
    marks.put(step, (now - last) / 1_000_000);
    last = now;
    trace(step);
  }

  /** Logs {@code what} with the time since the process started, if tracing is on. */
  void trace(String what) {
    if (TRACE) {
      LOG.info("startup +" + (System.nanoTime() - startNanos) / 1_000_000 + " ms: " + what);
    }
  }

  @Override
  public synchronized String toString() {
    return (last - startNanos) / 1_000_000 + " ms ("
        + marks.entrySet().stream().map(e -> e.getKey() + " " + e.getValue())
            .collect(Collectors.joining(", ")) + ")";
  }

  /** How long ago this process started; JVM uptime where /proc cannot say. */
  static long ageNanos() {
    try {
      String stat = Files.readString(Path.of("/proc/self/stat"));
      // The command name (field 2) may hold spaces; the fields after it are plain numbers.
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      long startTicks = Long.parseLong(f[19]); // field 22 of the whole line
      double uptime = Double.parseDouble(
          Files.readString(Path.of("/proc/uptime")).split(" ")[0]);
      long age = (long) (uptime * 1e9) - startTicks * 10_000_000L; // USER_HZ is 100 on Linux
      if (age >= 0 && age < Duration.ofMinutes(10).toNanos()) {
        return age;
      }
    } catch (IOException | RuntimeException e) {
      // not Linux, or an unexpected format: fall through
    }
    return Duration.between(ProcessHandle.current().info().startInstant().orElse(Instant.now()),
        Instant.now()).toNanos();
  }
}

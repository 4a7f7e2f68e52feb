package io.etcfs.launcher.node;

import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Where a node's start went: milliseconds from the process's start (as the kernel recorded it) to
 * each named step, for the READY log line. Join latency is a benchmark figure; this says which
 * part of it to work on.
 */
final class StartupClock {
  private final Instant processStart = ProcessHandle.current().info().startInstant()
      .orElse(Instant.now());
  private final Map<String, Long> marks = new LinkedHashMap<>();
  private Instant last = processStart;

  synchronized void mark(String step) {
    Instant now = Instant.now();
    marks.put(step, Duration.between(last, now).toMillis());
    last = now;
  }

  @Override
  public synchronized String toString() {
    return Duration.between(processStart, last).toMillis() + " ms ("
        + marks.entrySet().stream().map(e -> e.getKey() + " " + e.getValue())
            .collect(Collectors.joining(", ")) + ")";
  }
}

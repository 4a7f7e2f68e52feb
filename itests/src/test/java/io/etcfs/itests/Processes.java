package io.etcfs.itests;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/** Cleans up node and etcd processes by pid, even when a test failed half-way. */
final class Processes {
  private Processes() {}

  /** Kills every process whose pid is in a {@code *.pid} file under {@code dir}. */
  static void killAll(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> s = Files.walk(dir)) {
      for (Path p : s.filter(f -> f.toString().endsWith(".pid")).toList()) {
        pid(p).flatMap(ProcessHandle::of).ifPresent(Processes::kill);
      }
    }
  }

  static Optional<Long> pid(Path pidFile) {
    try {
      return Optional.of(Long.parseLong(Files.readString(pidFile).strip()));
    } catch (IOException | NumberFormatException e) {
      return Optional.empty();
    }
  }

  /**
   * Whether {@code pid} still runs. A process that has exited but is not reaped yet (a zombie:
   * this container's init reaps only now and then) counts as gone, as it does for
   * {@code etcfs umount}.
   */
  static boolean alive(long pid) {
    return DeathWatch.alive(pid);
  }

  private static void kill(ProcessHandle h) {
    h.destroyForcibly();
    try {
      h.onExit().get(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      // best effort: the test already failed or is cleaning up
    }
  }
}

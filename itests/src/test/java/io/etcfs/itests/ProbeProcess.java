package io.etcfs.itests;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A {@link Probe} running as its own process, stopped cleanly or killed by pid. */
final class ProbeProcess implements AutoCloseable {
  final String name;
  final Path log;
  final Path stopFile;
  final int id;
  final int size;
  final long offset;
  final long slots;
  private final Process process;

  private ProbeProcess(String name, Path log, Path stopFile, int id, int size, long offset,
      long slots, Process process) {
    this.name = name;
    this.log = log;
    this.stopFile = stopFile;
    this.id = id;
    this.size = size;
    this.offset = offset;
    this.slots = slots;
    this.process = process;
  }

  /** The {@code java} command that runs a main class of the test classes, JDK only. */
  static List<String> javaMain(Class<?> main) {
    try {
      String classes = Path.of(main.getProtectionDomain().getCodeSource().getLocation().toURI())
          .toString();
      String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
      return new ArrayList<>(List.of(java, "-Xmx64m", "-XX:+UseSerialGC",
          "-XX:TieredStopAtLevel=1", "-cp", classes, main.getName()));
    } catch (java.net.URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * Starts a probe writing records {@code size} bytes long into {@code file}, in the region of
   * {@code slots} records from {@code offset}; its log and stop file go to {@code dir}.
   */
  static ProbeProcess start(String name, Path dir, Path file, int id, int size, long offset,
      long slots, boolean fsync, String... extra) throws IOException {
    Path log = dir.resolve(name + ".log");
    Path stop = dir.resolve(name + ".stop");
    Files.deleteIfExists(log);
    Files.deleteIfExists(stop);
    List<String> cmd = javaMain(Probe.class);
    cmd.addAll(List.of("--file", file.toString(), "--log", log.toString(), "--id",
        Integer.toString(id), "--size", Integer.toString(size), "--offset", Long.toString(offset),
        "--slots", Long.toString(slots), "--stop-file", stop.toString()));
    if (fsync) {
      cmd.add("--fsync");
    }
    cmd.addAll(List.of(extra));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
        .redirectOutput(dir.resolve(name + ".out").toFile()).start();
    return new ProbeProcess(name, log, stop, id, size, offset, slots, p);
  }

  long pid() {
    return process.pid();
  }

  ProbeLog log() throws IOException {
    return ProbeLog.read(log);
  }

  /** Polls the log until {@code n} records completed after {@code since} µs, or fails. */
  ProbeLog awaitRecords(int n, long since, long timeoutMillis)
      throws IOException, InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    while (true) {
      ProbeLog l = log();
      if (l.completedBetween(since, Long.MAX_VALUE) >= n) {
        return l;
      }
      if (!process.isAlive()) {
        throw new AssertionError("probe " + name + " exited: " + output());
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("probe " + name + " completed fewer than " + n
            + " records in " + timeoutMillis + " ms; errors: " + l.errors);
      }
      TimeUnit.MILLISECONDS.sleep(5);
    }
  }

  /**
   * Asks the probe to end after its current record and waits for it; true if it ended by
   * itself, false if it had to be killed (a write stuck in FUSE).
   */
  boolean stop(long timeoutMillis) throws IOException, InterruptedException {
    Files.writeString(stopFile, "stop");
    if (process.waitFor(timeoutMillis, TimeUnit.MILLISECONDS)) {
      return true;
    }
    kill();
    return false;
  }

  void kill() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor(10, TimeUnit.SECONDS);
  }

  String output() {
    try {
      return Files.readString(log.resolveSibling(name + ".out"));
    } catch (IOException e) {
      return "(no output: " + e + ")";
    }
  }

  @Override
  public void close() throws InterruptedException {
    if (process.isAlive()) {
      kill();
    }
  }
}

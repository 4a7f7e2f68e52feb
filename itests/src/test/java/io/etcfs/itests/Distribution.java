package io.etcfs.itests;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The real tarball, unpacked once per test JVM, and {@code bin/etcfs} run from it as a user
 * would. Every run gets a private runtime dir so tests never touch the machine's mount records.
 */
final class Distribution {
  private static Path home;

  private Distribution() {}

  static synchronized Path home() throws IOException, InterruptedException {
    if (home == null) {
      Path tarball = Path.of(System.getProperty("etcfs.tarball"));
      if (!Files.isRegularFile(tarball)) {
        throw new IllegalStateException("tarball not built: " + tarball);
      }
      Path work = Path.of(System.getProperty("etcfs.itest.work"));
      Path dist = work.resolve("dist");
      if (Files.exists(dist)) {
        new ProcessBuilder("rm", "-rf", dist.toString()).inheritIO().start().waitFor();
      }
      Files.createDirectories(dist);
      Process tar = new ProcessBuilder("tar", "xzf", tarball.toString(), "-C", dist.toString())
          .inheritIO().start();
      if (!tar.waitFor(120, TimeUnit.SECONDS) || tar.exitValue() != 0) {
        throw new IllegalStateException("cannot unpack " + tarball);
      }
      try (var s = Files.list(dist)) {
        home = s.findFirst().orElseThrow();
      }
    }
    return home;
  }

  static Path bundleDir() throws IOException, InterruptedException {
    return home().resolve("bundle");
  }

  /**
   * The outcome of one command.
   *
   * @param exit its exit status
   * @param out its standard output
   * @param err its standard error
   */
  record Result(int exit, String out, String err) {
    List<String> errLines() {
      return err.lines().toList();
    }

    @Override
    public String toString() {
      return "exit " + exit + "\n--- stdout\n" + out + "--- stderr\n" + err;
    }
  }

  /** Runs {@code bin/etcfs args} with {@code runtimeDir} as its ETCFS_RUNTIME_DIR. */
  static Result etcfs(Path runtimeDir, Duration timeout, String... args)
      throws IOException, InterruptedException {
    return etcfs(runtimeDir, timeout, Map.of(), args);
  }

  static Result etcfs(Path runtimeDir, Duration timeout, Map<String, String> env, String... args)
      throws IOException, InterruptedException {
    return run(command(runtimeDir, env, args), timeout, null, args);
  }

  /** Runs {@code bin/etcfs args} with {@code input} as its standard input. */
  static Result etcfsWithInput(Path runtimeDir, Duration timeout, String input, String... args)
      throws IOException, InterruptedException {
    return run(command(runtimeDir, Map.of(), args), timeout, input, args);
  }

  /** The process builder for {@code bin/etcfs args}, for tests that manage the process. */
  static ProcessBuilder command(Path runtimeDir, Map<String, String> env, String... args)
      throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    cmd.add(home().resolve("bin/etcfs").toString());
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd);
    pb.environment().put("ETCFS_RUNTIME_DIR", runtimeDir.toString());
    pb.environment().remove("ETCFS_ETCD");
    // the failsafe execution that reruns a cross-section on the libfuse 2 front end sets this
    String frontend = System.getProperty("etcfs.frontend", "");
    if (!frontend.isEmpty()) {
      pb.environment().put("ETCFS_FRONTEND", frontend);
    } else {
      pb.environment().remove("ETCFS_FRONTEND");
    }
    pb.environment().putAll(env);
    return pb;
  }

  static Result run(ProcessBuilder pb, Duration timeout, String input, String... args)
      throws IOException, InterruptedException {
    Path out = Files.createTempFile("etcfs-out", ".txt");
    Path err = Files.createTempFile("etcfs-err", ".txt");
    pb.redirectOutput(out.toFile()).redirectError(err.toFile());
    if (input == null) {
      pb.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
    } else {
      Path in = Files.writeString(Files.createTempFile("etcfs-in", ".txt"), input);
      pb.redirectInput(in.toFile());
    }
    Process p = pb.start();
    if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      throw new AssertionError("etcfs " + String.join(" ", args) + " did not finish within "
          + timeout + "\n" + Files.readString(out) + Files.readString(err));
    }
    Result r = new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
        Files.readString(err, StandardCharsets.UTF_8));
    Files.delete(out);
    Files.delete(err);
    return r;
  }
}

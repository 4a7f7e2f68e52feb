package io.etcfs.itests;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/** What the fault tests share: polling with a deadline, a cluster's etcd, pids and remounts. */
final class Faults {
  static final int RECORD = 64 * 1024;

  private Faults() {}

  /** Polls {@code check} every 5 ms until it holds; fails naming {@code what} at the deadline. */
  static void await(String what, Duration timeout, Callable<Boolean> check) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!check.call()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("not within " + timeout + ": " + what);
      }
      TimeUnit.MILLISECONDS.sleep(5);
    }
  }

  /** Polls {@code check} every 5 ms until it holds (true) or the deadline passes (false). */
  static boolean poll(Duration timeout, Callable<Boolean> check) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!check.call()) {
      if (System.nanoTime() > deadline) {
        return false;
      }
      TimeUnit.MILLISECONDS.sleep(5);
    }
    return true;
  }

  private static final long T0 = System.nanoTime();

  /** Prints a step of a fault test with the time since the test JVM loaded this class. */
  static void step(String what) {
    System.out.printf(Locale.ROOT, "[%7.1f s] %s%n", (System.nanoTime() - T0) / 1e9, what);
  }

  static String ms(long micros) {
    return String.format(Locale.ROOT, "%.0f ms", micros / 1e3);
  }

  /** {@code DIR/cluster.env} of a local cluster. */
  static Map<String, String> env(Path clusterDir) throws IOException {
    Map<String, String> m = new LinkedHashMap<>();
    for (String line : Files.readAllLines(clusterDir.resolve("cluster.env"))) {
      int eq = line.indexOf('=');
      if (eq > 0) {
        m.put(line.substring(0, eq), line.substring(eq + 1).replaceAll("^'|'$", ""));
      }
    }
    return m;
  }

  static long nodePid(LocalCluster c, int node) {
    return Processes.pid(c.dir().resolve("run/node" + node + ".pid"))
        .orElseThrow(() -> new AssertionError("no pid file for node" + node));
  }

  /** etcdctl against {@code endpoints}; its output, failing on a non-zero exit. */
  static String etcdctl(String endpoints, String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of("etcdctl", "--endpoints", endpoints,
        "--command-timeout=3s", "--dial-timeout=2s"));
    cmd.addAll(List.of(args));
    return Sh.run(cmd.toArray(new String[0])).ok().out();
  }

  /** The node's generation (create revision of its membership key), or -1 without one. */
  static long generation(String endpoints, String fs, String node) throws Exception {
    String out = etcdctl(endpoints, "get", "/etcfs/" + fs + "/members/" + node, "-w", "json");
    var m = java.util.regex.Pattern.compile("\"create_revision\":(\\d+)").matcher(out);
    return m.find() ? Long.parseLong(m.group(1)) : -1;
  }

  /**
   * The record recovery put for incarnation {@code generation} of {@code node}
   * ({@code fences/<node>/<generation>}: Properties text with {@code result=done} once it is
   * recovered), or "" while there is none.
   */
  static String fenceRecord(String endpoints, String fs, String node, long generation)
      throws Exception {
    return etcdctl(endpoints, "get", "--print-value-only",
        "/etcfs/" + fs + "/fences/" + node + "/" + String.format("%016x", generation));
  }

  /** Polls until recovery of that incarnation is recorded as done; the time seen, in µs. */
  static long awaitRecovered(String endpoints, String fs, String node, long generation,
      Duration timeout) throws Exception {
    await(node + " generation " + generation + " recovered (fences/ record with result=done)",
        timeout, () -> fenceRecord(endpoints, fs, node, generation).contains("result=done"));
    return Probe.nowMicros();
  }

  /** Sends a signal to a pid with kill(1). */
  static void signal(long pid, String sig) throws Exception {
    Sh.run("kill", "-" + sig, Long.toString(pid)).ok();
  }

  /**
   * Mounts {@code node} of a local cluster again at its mountpoint, with its state dir and log,
   * optionally as a command prefixed by {@code prefix} (e.g. nsenter) and against other endpoints.
   */
  static Distribution.Result mount(LocalCluster c, int node, String etcd, List<String> prefix)
      throws Exception {
    Map<String, String> env = env(c.dir());
    ProcessBuilder pb = Distribution.command(c.runtime(), Map.of(), "mount",
        env.get("ETCFS_DEVICE"), c.mount(node).toString(), "--etcd", etcd, "--name",
        env.get("ETCFS_FS"), "--node", "node" + node, "--state-dir", c.dir().resolve("run")
            .toString(), "--log", c.dir().resolve("log/node" + node + ".log").toString());
    if (!prefix.isEmpty()) {
      List<String> cmd = new ArrayList<>(prefix);
      cmd.addAll(pb.command());
      pb.command(cmd);
    }
    pb.redirectErrorStream(true).redirectInput(ProcessBuilder.Redirect.from(new java.io.File(
        "/dev/null")));
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes());
    if (!p.waitFor(180, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("etcfs mount node" + node + " hung: " + out);
    }
    return new Distribution.Result(p.exitValue(), out, "");
  }

  static Distribution.Result mount(LocalCluster c, int node) throws Exception {
    return mount(c, node, env(c.dir()).get("ETCFS_ETCD"), List.of());
  }
}

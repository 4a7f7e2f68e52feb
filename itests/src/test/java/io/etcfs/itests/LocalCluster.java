package io.etcfs.itests;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A local cluster started with {@code etcfs up} from the tarball, for tests that need real
 * mounts: started once per test class, stopped with {@code etcfs down}, and its processes killed
 * by pid whatever happened.
 */
final class LocalCluster implements AutoCloseable {
  private static final Duration T = Duration.ofSeconds(240);
  private final Path root;
  private final Path runtime;
  private final Path dir;

  private LocalCluster(Path root) {
    this.root = root;
    this.runtime = root.resolve("rt");
    this.dir = root.resolve("cluster");
  }

  static LocalCluster up(Path root, int nodes, String size) throws Exception {
    return up(root, nodes, size, java.util.Map.of());
  }

  /** As {@link #up(Path, int, String)}, with extra environment for the CLI (and its nodes). */
  static LocalCluster up(Path root, int nodes, String size, java.util.Map<String, String> env,
      String... options) throws Exception {
    LocalCluster c = new LocalCluster(root);
    Files.createDirectories(c.runtime);
    java.util.List<String> args = new java.util.ArrayList<>(java.util.List.of("up", "--nodes",
        Integer.toString(nodes), "--dir", c.dir.toString(), "--size", size));
    args.addAll(java.util.List.of(options));
    // the failsafe executions that rerun a cross-section on the other strategies set these
    for (String strategy : java.util.List.of("lock", "alloc")) {
      String chosen = System.getProperty("etcfs." + strategy, "");
      if (!chosen.isEmpty() && !args.contains("--" + strategy)) {
        args.addAll(java.util.List.of("--" + strategy, chosen));
      }
    }
    Distribution.Result r = Distribution.etcfs(c.runtime, T, env, args.toArray(new String[0]));
    if (r.exit() != 0) {
      c.close();
      throw new AssertionError("etcfs up failed: " + r);
    }
    return c;
  }

  /**
   * A cluster a test laid out by hand under {@code root/cluster} ({@code run/}, {@code log/},
   * {@code mnt/}, {@code cluster.env}), closed the same way: {@code etcfs down}, then every pid
   * under {@code root} killed and every mount under {@code mnt/} detached.
   */
  static LocalCluster adopt(Path root) throws IOException {
    LocalCluster c = new LocalCluster(root);
    Files.createDirectories(c.runtime);
    for (String sub : java.util.List.of("run", "log", "mnt", "etcd")) {
      Files.createDirectories(c.dir.resolve(sub));
    }
    return c;
  }

  /** One of a node's counters, from {@code stats --json} in its shell. */
  long counter(Path mount, String name) throws Exception {
    Distribution.Result r = etcfs("shell", mount.toString(), "-c", "stats --json");
    if (r.exit() != 0) {
      throw new AssertionError("stats: " + r);
    }
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"" + name + "\": (\\d+)")
        .matcher(r.out());
    if (!m.find()) {
      throw new AssertionError("no " + name + " in " + r.out());
    }
    return Long.parseLong(m.group(1));
  }

  Path mount(int node) {
    return dir.resolve("mnt/node" + node);
  }

  Path dir() {
    return dir;
  }

  Path runtime() {
    return runtime;
  }

  Distribution.Result etcfs(String... args) throws Exception {
    return Distribution.etcfs(runtime, T, args);
  }

  @Override
  public void close() throws IOException {
    printWarnings();
    keepLogs();
    try {
      Distribution.etcfs(runtime, T, "down", "--dir", dir.toString());
    } catch (Exception | AssertionError e) {
      System.err.println("etcfs down failed: " + e);
    } finally {
      Processes.killAll(root);
      for (Path mp : mounts()) {
        unmountQuietly(mp);
      }
    }
  }

  /**
   * With {@code ETCFS_IT_KEEP_LOGS=DIR} set, the nodes' whole logs are copied under DIR (one
   * directory per cluster), for a failure the warnings alone do not explain.
   */
  private void keepLogs() {
    String keep = System.getenv("ETCFS_IT_KEEP_LOGS");
    Path logs = dir.resolve("log");
    if (keep == null || keep.isBlank() || !Files.isDirectory(logs)) {
      return;
    }
    try {
      Path to = Files.createDirectories(Path.of(keep))
          .resolve("cluster-" + System.currentTimeMillis());
      Files.createDirectories(to);
      try (var files = Files.list(logs)) {
        for (Path log : files.toList()) {
          Files.copy(log, to.resolve(log.getFileName()));
        }
      }
      System.err.println("node logs kept in " + to);
    } catch (IOException e) {
      System.err.println("cannot keep node logs: " + e);
    }
  }

  /** The nodes' warnings, on the test's output: what a failed run on CI leaves to go by. */
  private void printWarnings() {
    Path logs = dir.resolve("log");
    if (!Files.isDirectory(logs)) {
      return;
    }
    try (var files = Files.list(logs)) {
      for (Path log : files.sorted().toList()) {
        java.util.List<String> lines = Files.readAllLines(log).stream()
            .filter(l -> l.contains(" WARNING ") || l.contains(" SEVERE ") || l.contains(" ERROR "))
            .filter(l -> !l.contains("hazelcast") && !l.contains("org.jline"))
            .toList();
        lines.stream().skip(Math.max(0, lines.size() - 40))
            .forEach(l -> System.err.println(log.getFileName() + ": " + l));
      }
    } catch (IOException | java.io.UncheckedIOException e) {
      System.err.println("cannot read node logs in " + logs + ": " + e);
    }
  }

  private java.util.List<Path> mounts() throws IOException {
    Path mnt = dir.resolve("mnt");
    if (!Files.isDirectory(mnt)) {
      return java.util.List.of();
    }
    try (var s = Files.list(mnt)) {
      return s.toList();
    }
  }

  /** A killed node can leave a dead FUSE mount; a lazy unmount clears it. */
  static void unmountQuietly(Path mp) {
    try {
      String mounts = Files.readString(Path.of("/proc/self/mountinfo"));
      if (mounts.contains(" " + mp + " ")) {
        new ProcessBuilder("fusermount", "-uz", mp.toString()).inheritIO().start()
            .waitFor(30, TimeUnit.SECONDS);
      }
    } catch (IOException | InterruptedException e) {
      System.err.println("cannot unmount " + mp + ": " + e);
    }
  }
}

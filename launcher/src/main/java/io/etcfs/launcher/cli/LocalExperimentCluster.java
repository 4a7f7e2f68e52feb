package io.etcfs.launcher.cli;

import io.etcfs.launcher.experiment.Cluster;
import io.etcfs.launcher.experiment.Strategy;
import io.etcfs.launcher.node.EtcdConnection;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The experiment's own local cluster: started afresh for each run with {@code etcfs up} (a
 * child process of this installation, its output in a log beside the report), stopped with
 * {@code etcfs down}, and replaced by a new one when a switch cannot be made live.
 */
final class LocalExperimentCluster implements Cluster {
  private final Path dir;
  private final int nodes;
  private final long size;
  private final Path log;
  private final NodeCycler cycler;
  private volatile boolean up;
  private volatile Process child;
  private int clusters;

  LocalExperimentCluster(Path dir, int nodes, long size, Path log) {
    this.dir = dir;
    this.nodes = nodes;
    this.size = size;
    this.log = log;
    this.cycler = new NodeCycler(mounts());
  }

  @Override
  public String describe() {
    return "a local cluster of " + nodes + " node" + (nodes == 1 ? "" : "s") + " started by"
        + " 'etcfs up' for each run (private etcd, sparse device image of " + Units.human(size)
        + ", FUSE mounts; in " + dir + "; each cluster's node logs kept in logs/cluster-K"
        + " beside this report)";
  }

  @Override
  public List<Path> mounts() {
    List<Path> m = new ArrayList<>();
    for (int i = 1; i <= nodes; i++) {
      m.add(dir.resolve("mnt").resolve("node" + i));
    }
    return m;
  }

  @Override
  public String begin(Strategy s) throws Exception {
    start(s);
    return "";
  }

  private void start(Strategy s) throws Exception {
    up = true; // from here on, end() stops whatever was started
    etcfs("up", "--nodes", Integer.toString(nodes), "--dir", dir.toString(), "--size",
        Long.toString(size), "--lock", s.lock(), "--alloc", s.alloc(), "--fresh");
  }

  @Override
  public void end() throws Exception {
    if (up && Files.exists(ClusterEnv.file(dir))) {
      etcfs("down", "--dir", dir.toString());
      keepLogs();
    }
    up = false;
  }

  /**
   * The nodes' logs of the cluster just stopped, copied beside the report as logs/cluster-K
   * (the next 'up --fresh' deletes them): what a failed operation in the report is explained by.
   */
  private void keepLogs() throws IOException {
    Path logs = dir.resolve("log");
    if (!Files.isDirectory(logs)) {
      return;
    }
    clusters++;
    Path to = Files.createDirectories(log.getParent().resolve("logs").resolve("cluster-"
        + clusters));
    try (var files = Files.list(logs)) {
      for (Path f : files.toList()) {
        Files.copy(f, to.resolve(f.getFileName()),
            java.nio.file.StandardCopyOption.REPLACE_EXISTING);
      }
    }
  }

  /** Stops the cluster from a shutdown hook (the user pressed Ctrl-C): best effort. */
  void stopQuietly() {
    try {
      // an 'etcfs up' under way outlives this JVM: let it finish, then stop what it started
      Process p = child;
      if (p != null && p.isAlive() && !p.waitFor(3, TimeUnit.MINUTES)) {
        p.destroyForcibly();
      }
      end();
    } catch (Exception e) {
      System.err.println("etcfs experiment: could not stop the cluster in " + dir + ": "
          + Main.describe(e) + " (etcfs down --dir " + dir + ")");
    }
  }

  @Override
  public Strategy current() {
    return LiveSwitch.current(connection(), ClusterEnv.read(dir).fsName());
  }

  @Override
  public Switched switchLive(String kind, String to) throws NotLive, Exception {
    return LiveSwitch.ask(connection(), ClusterEnv.read(dir).fsName(), kind, to);
  }

  private EtcdConnection connection() {
    return EtcdConnection.of(ClusterEnv.read(dir).etcd());
  }

  @Override
  public boolean canStartFresh() {
    return true;
  }

  @Override
  public void fresh(Strategy s) throws Exception {
    end();
    start(s);
  }

  @Override
  public void kill(int node) throws Exception {
    cycler.kill(node);
  }

  @Override
  public void restart(int node) throws Exception {
    cycler.restart(node);
  }

  /** Runs bin/etcfs of this installation, its output appended to the log. */
  private void etcfs(String... args) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Home.dir().resolve("bin/etcfs").toString());
    cmd.addAll(List.of(args));
    Files.createDirectories(log.getParent());
    Files.writeString(log, "$ etcfs " + String.join(" ", args) + "\n",
        java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
        .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
    child = p;
    if (!p.waitFor(10, TimeUnit.MINUTES)) {
      p.destroyForcibly();
      throw new IllegalStateException("etcfs " + args[0] + " did not finish within 10 minutes"
          + " (see " + log + ")");
    }
    if (p.exitValue() != 0) {
      List<String> lines = Files.readAllLines(log);
      throw new IllegalStateException("etcfs " + args[0] + " failed: "
          + (lines.isEmpty() ? "" : lines.get(lines.size() - 1)) + " (see " + log + ")");
    }
  }
}

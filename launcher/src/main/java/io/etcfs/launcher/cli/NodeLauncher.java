package io.etcfs.launcher.cli;

import io.etcfs.core.format.FilesystemCheck;
import io.etcfs.core.format.FormatException;
import io.etcfs.etcd.client.EtcdMetaStore;
import io.etcfs.launcher.UserError;
import io.etcfs.launcher.control.ControlClient;
import io.etcfs.launcher.node.ExitStatus;
import io.etcfs.launcher.node.NodeSpec;
import io.etcfs.spi.fs.FsRecord;
import io.etcfs.spi.fs.Keyspace;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Starts node runtimes in their own JVMs and waits until each is whole, or relays the one line
 * that says why it is not. Shared by {@code mount} and {@code up}.
 */
final class NodeLauncher {
  /** A cold JVM plus bundle start on a loaded 2-core machine can take tens of seconds. */
  private static final Duration READY_TIMEOUT = Duration.ofSeconds(120);
  /** How long a healthy node's mount may stay unreachable from the CLI before the start fails. */
  private static final Duration MOUNT_TIMEOUT = Duration.ofSeconds(20);
  /** The bound on one stat of a mount root. */
  private static final Duration STAT_BOUND = Duration.ofSeconds(10);
  private static final int MAX_SOCKET_PATH = 107;

  private NodeLauncher() {}

  /** Checks everything a user can get wrong on this machine, before a JVM is spent on it. */
  static void checkLocal(NodeSpec spec) throws IOException {
    checkSettings(spec);
    // A live node first: its mount would otherwise be reported as something mounted there, with
    // advice meant for a dead node's leftover. Its own record, else any node JVM on this machine
    // whose spec names the path (one started with another runtime dir, or still starting).
    Optional<String> server = MountRegistry.standard().find(spec.mountpoint())
        .filter(NodeLauncher::alive)
        .map(s -> s.nodeName() + pid(s).map(p -> " (pid " + p + ")").orElse(""))
        .or(() -> NodeProcesses.serving(List.of(spec.mountpoint())).stream().findFirst()
            .map(n -> n.spec().nodeName() + " (pid " + n.pid() + ")"));
    if (server.isPresent()) {
      throw new UserError(spec.mountpoint() + " is already served by node " + server.get()
          + "; 'etcfs umount " + spec.mountpoint() + "' stops it");
    }
    checkMountpoint(spec.mountpoint());
    checkStateDir(spec.stateDir());
    if (spec.socket().toString().length() > MAX_SOCKET_PATH) {
      throw new UserError("state directory path is too long for a control socket (max "
          + MAX_SOCKET_PATH + " bytes): " + spec.socket());
    }
  }

  /** {@code ETCFS_NODE_CONFIG} names components and properties the node has. */
  private static void checkSettings(NodeSpec spec) {
    try {
      // a backend not known yet (read from the record by the node) accepts either's settings
      io.etcfs.launcher.node.NodeConfigs.withSettings(io.etcfs.launcher.node.NodeConfigs.of(spec),
          System.getenv(io.etcfs.launcher.node.NodeConfigs.SETTINGS_ENV));
    } catch (IllegalArgumentException e) {
      throw new UserError(e.getMessage());
    }
  }

  /**
   * Checks what etcd knows: the filesystem exists on this device, the lock backend (if given)
   * is the recorded one, and the node name is not live.
   */
  static void checkEtcd(NodeSpec spec, EtcdMetaStore store) {
    checkEtcd(spec, store, -1);
  }

  /**
   * As {@link #checkEtcd(NodeSpec, EtcdMetaStore)}, while node JVM {@code ownPid} boots: a
   * member key that this very node has written meanwhile (its record names that pid and this
   * mountpoint) is no conflict. The node can join before this check reads etcd, and was then
   * told it clashed with itself and stopped (`LeaveRejoinIT`, once in about 15 runs). The
   * join's own transaction still refuses a name that is live (member key absent, or no join).
   */
  static void checkEtcd(NodeSpec spec, EtcdMetaStore store, long ownPid) {
    FsRecord record;
    try {
      record = FilesystemCheck.verify(store, spec.fsName(), spec.device());
    } catch (FormatException e) {
      throw new UserError(e.getMessage());
    } catch (IOException e) {
      throw new UserError("cannot read " + spec.device() + ": " + e.getMessage(), e);
    }
    if (!spec.lockBackend().isEmpty() && !record.lockBackend().equals(spec.lockBackend())) {
      throw new UserError("filesystem '" + spec.fsName() + "' uses the lock backend '"
          + record.lockBackend() + "'; every node must use the same one (got --lock "
          + spec.lockBackend() + ")");
    }
    if (!spec.allocBackend().isEmpty() && !record.allocBackend().equals(spec.allocBackend())) {
      throw new UserError("filesystem '" + spec.fsName() + "' uses the allocator '"
          + record.allocBackend() + "'; every node must use the same one (got "
          + spec.allocBackend() + ")");
    }
    var member = store.get(Keyspace.of(spec.fsName()).bytes(Keyspace.MEMBERS + spec.nodeName()));
    if (member.isPresent() && !isOwnRecord(member.get().valueString(), ownPid, spec.mountpoint())) {
      throw new UserError("node name '" + spec.nodeName() + "' is already a member of '"
          + spec.fsName() + "' (choose another --node, or wait for its lease to expire)");
    }
  }

  /** Whether a member record names node JVM {@code pid} at {@code mountpoint}. */
  static boolean isOwnRecord(String record, long pid, Path mountpoint) {
    // a record this launcher cannot read is a conflict, as before
    return pid > 0 && MemberRecords.parse(record)
        .filter(p -> Long.toString(pid).equals(p.getProperty("pid"))
            && mountpoint.toString().equals(p.getProperty("mountpoint")))
        .isPresent();
  }

  /** Both checks, one after the other (for starts that cannot overlap them). */
  static void check(NodeSpec spec, EtcdMetaStore store) throws IOException {
    checkLocal(spec);
    checkEtcd(spec, store);
  }

  /**
   * Runs {@code check} while the node's JVM boots (the etcd check costs the CLI about as long as
   * the node's JVM and framework take to start, so overlapping them shortens every join). If the
   * check fails, the node is stopped — SIGTERM, then SIGKILL — its records are removed, and the
   * check's error is what the user sees.
   */
  static void checkWhileStarting(NodeSpec spec, Process node, Runnable check)
      throws InterruptedException, IOException {
    try {
      check.run();
    } catch (RuntimeException e) {
      node.destroy();
      if (!node.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)) {
        node.destroyForcibly();
        node.waitFor(10, java.util.concurrent.TimeUnit.SECONDS);
      }
      Files.deleteIfExists(spec.pidFile());
      Files.deleteIfExists(spec.socket());
      Files.deleteIfExists(spec.specFile());
      throw e;
    }
  }

  static void checkMountpoint(Path mp) throws IOException {
    if (Mounts.isMounted(mp)) {
      throw new UserError("something is already mounted at " + mp
          + " (a node that died leaves its mount: 'etcfs umount " + mp + "' clears it)");
    }
    if (!Files.isDirectory(mp)) {
      throw new UserError("mountpoint " + mp + " is not a directory");
    }
    try (Stream<Path> s = Files.list(mp)) {
      if (s.findAny().isPresent()) {
        throw new UserError("mountpoint " + mp + " is not an empty directory");
      }
    }
  }

  static void checkStateDir(Path dir) {
    try {
      Files.createDirectories(dir);
      Path probe = Files.createTempFile(dir, ".probe", "");
      Files.delete(probe);
    } catch (IOException | SecurityException e) {
      throw new UserError("state directory " + dir + " is not writable (" + e.getMessage() + ")");
    }
  }

  /** Starts the node's JVM detached from this terminal, its output going to its log. */
  static Process spawn(NodeSpec spec) throws IOException {
    spec.write();
    Files.createDirectories(spec.logFile().toAbsolutePath().getParent());
    NodeArchive.Plan cds = NodeArchive.plan(Home.nodeClassPath(), jvmOptions());
    ProcessBuilder pb = new ProcessBuilder(command(spec, false, cds));
    pb.redirectErrorStream(true);
    pb.redirectOutput(ProcessBuilder.Redirect.appendTo(spec.logFile().toFile()));
    pb.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
    Process p;
    try {
      p = pb.start();
    } catch (IOException | RuntimeException e) {
      cds.abandoned();
      throw e;
    }
    started(cds, p);
    return p;
  }

  /** The archive plans of nodes started by this CLI that are not ready yet, by pid. */
  private static final java.util.Map<Long, NodeArchive.Plan> ARCHIVE_PLANS =
      new java.util.concurrent.ConcurrentHashMap<>();

  private static void started(NodeArchive.Plan cds, Process p) {
    cds.started(p.pid());
    ARCHIVE_PLANS.put(p.pid(), cds);
  }

  /**
   * Runs the node in the foreground on this terminal, with the shell where there is one, and
   * registers its mountpoint once it is ready so that {@code umount} works from elsewhere. A
   * SIGTERM or SIGINT to this CLI is passed on, so the node leaves cleanly rather than being
   * orphaned.
   */
  static int runForeground(NodeSpec spec) throws IOException, InterruptedException {
    spec.write();
    NodeArchive.Plan cds = NodeArchive.plan(Home.nodeClassPath(), jvmOptions());
    Process p;
    try {
      p = new ProcessBuilder(command(spec, System.console() != null, cds)).inheritIO().start();
    } catch (IOException | RuntimeException e) {
      cds.abandoned();
      throw e;
    }
    started(cds, p);
    Thread forward = new Thread(() -> stopChild(p), "etcfs-forward-signal");
    Runtime.getRuntime().addShutdownHook(forward);
    Thread register = new Thread(() -> registerWhenReady(spec, p), "etcfs-register");
    register.setDaemon(true);
    register.start();
    int status = p.waitFor();
    MountRegistry.standard().remove(spec.mountpoint());
    try {
      Runtime.getRuntime().removeShutdownHook(forward);
    } catch (IllegalStateException e) {
      // the JVM is shutting down: the hook is running or has run
    }
    return status;
  }

  /**
   * This CLI got SIGTERM or SIGINT (systemd stopping the unit, say): the node leaves cleanly on
   * its own SIGTERM. This JVM then exits with 143 like the node, except when the node ends as
   * {@link ExitStatus#FENCED}: that status is passed on, so a supervisor never mistakes a fenced
   * node for a clean stop.
   */
  private static void stopChild(Process p) {
    p.destroy();
    try {
      if (p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)
          && p.exitValue() == ExitStatus.FENCED) {
        Runtime.getRuntime().halt(ExitStatus.FENCED);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void registerWhenReady(NodeSpec spec, Process p) {
    try {
      awaitReady(spec, p);
      MountRegistry.standard().register(spec);
    } catch (IOException | InterruptedException | UserError e) {
      // the node reports its own failure on this terminal
    }
  }

  private static List<String> command(NodeSpec spec, boolean shell, NodeArchive.Plan cds) {
    List<String> cmd = new ArrayList<>();
    if (!shell) {
      cmd.add("setsid");
    }
    cmd.add(Home.java().toString());
    cmd.add("-Detcfs.home=" + Home.dir());
    cmd.addAll(jvmOptions());
    // The class-data-sharing archive, once one has been recorded (see NodeArchive).
    cmd.addAll(cds.options());
    cmd.add("-cp");
    cmd.add(Home.nodeClassPath());
    cmd.add("io.etcfs.launcher.node.NodeMain");
    cmd.add(spec.specFile().toString());
    if (shell) {
      cmd.add("--shell");
    }
    return cmd;
  }

  /** Up to this many processors, a node runs without the optimising compiler (see jvmOptions). */
  static final int SMALL_MACHINE_CPUS = 2;

  /** The node JVM's options: etcfs's own, then {@code ETCFS_NODE_JAVA_OPTS}. */
  private static List<String> jvmOptions() {
    List<String> opts = new ArrayList<>();
    // A node is small (tens of MB of heap) and its pauses are short with the serial collector.
    opts.add("-XX:+UseSerialGC");
    if (Runtime.getRuntime().availableProcessors() <= SMALL_MACHINE_CPUS) {
      // On two cores the optimising compiler (C2) competes with the node it compiles for: a
      // fresh node's first `tar x` of 7,911 files spent 9.8 of node1's 21.7 s of CPU in C2
      // (9,782 compilations). With C1 alone that run took 17 s instead of 27, a warm one the
      // same (14 s against 13), a 1 GiB write+fsync and a cold read no less (2026-12-04). A new
      // node — the one that joins to take over — is where it counts. A later
      // -XX:TieredStopAtLevel in ETCFS_NODE_JAVA_OPTS wins.
      opts.add("-XX:TieredStopAtLevel=1");
    }
    // Names cross jnr-fuse as Strings decoded with the default charset: make it UTF-8 whatever
    // the caller's locale, so that every UTF-8 name round-trips.
    opts.add("-Dfile.encoding=UTF-8");
    // Extra JVM options for node processes (heap size, diagnostics), after ours so they win.
    String extra = System.getenv("ETCFS_NODE_JAVA_OPTS");
    if (extra != null && !extra.isBlank()) {
      opts.addAll(List.of(extra.trim().split("\\s+")));
    }
    return opts;
  }

  /**
   * Waits until the node is ready: it answers {@code health} with ready, and its mount root, as
   * this process sees it, stats as the etcfs mount (see {@link #notServing}). Fails with the
   * node's own start-up error if it exits, and stops it if it is not ready in time: nothing is
   * left running.
   */
  static void awaitReady(NodeSpec spec, Process p) throws InterruptedException {
    long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
    long mountDeadline = Long.MAX_VALUE;
    while (System.nanoTime() < deadline) {
      if (!p.isAlive()) {
        throw new UserError(failureLine(spec));
      }
      if (healthy(spec)) {
        Optional<String> problem = notServing(spec);
        if (problem.isEmpty()) {
          Optional.ofNullable(ARCHIVE_PLANS.remove(p.pid())).ifPresent(NodeArchive.Plan::ready);
          return;
        }
        // Healthy means the node saw its own mount appear; the root may still fail a stat for a
        // moment (a first getattr that waits on a busy etcd). A mount that stays unreachable
        // from here is not one the user can use.
        mountDeadline = Math.min(mountDeadline, System.nanoTime() + MOUNT_TIMEOUT.toNanos());
        if (System.nanoTime() > mountDeadline) {
          stopStarted(spec, p);
          throw new UserError("node " + spec.nodeName() + " does not serve " + spec.mountpoint()
              + ": " + problem.get() + " (see " + spec.logFile() + ")");
        }
      }
      Thread.sleep(50);
    }
    stopStarted(spec, p);
    throw new UserError("node " + spec.nodeName() + " did not become ready within "
        + READY_TIMEOUT.toSeconds() + " s (see " + spec.logFile() + ")");
  }

  static boolean healthy(NodeSpec spec) {
    if (!Files.exists(spec.socket())) {
      return false;
    }
    try {
      return ControlClient.ask(spec.socket(), "health").status() == 0;
    } catch (IOException e) {
      return false; // the socket file appears just before the server accepts; poll again
    }
  }

  /**
   * Why the node, though running, is not serving its mountpoint to this process, if it is not:
   * nothing or something else mounted there, or a root that does not answer {@code stat}, or
   * one that answers from the directory under the mount.
   */
  static Optional<String> notServing(NodeSpec spec) {
    return Mounts.notServing(spec.mountpoint(), STAT_BOUND);
  }

  /** Stops a node that did not become ready: SIGTERM (it leaves cleanly), then SIGKILL. */
  private static void stopStarted(NodeSpec spec, Process p) throws InterruptedException {
    p.destroy();
    if (!p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)) {
      p.destroyForcibly();
      p.waitFor(10, java.util.concurrent.TimeUnit.SECONDS);
    }
    try {
      Files.deleteIfExists(spec.pidFile());
      Files.deleteIfExists(spec.socket());
    } catch (IOException e) {
      // stale records are harmless: the next start or stop checks the pid behind them
    }
  }

  /** The node's own last word on why it failed, from its log. */
  private static String failureLine(NodeSpec spec) {
    try (Stream<String> lines = Files.lines(spec.logFile())) {
      List<String> failures = lines.filter(l -> l.startsWith("etcfs: ")).toList();
      if (!failures.isEmpty()) {
        return failures.get(failures.size() - 1).substring("etcfs: ".length());
      }
    } catch (IOException e) {
      // fall through to the generic message
    }
    return "node " + spec.nodeName() + " exited during start-up (see " + spec.logFile() + ")";
  }

  static boolean alive(NodeSpec spec) {
    return pid(spec).flatMap(ProcessHandle::of).map(ProcessHandle::isAlive).orElse(false);
  }

  static java.util.Optional<Long> pid(NodeSpec spec) {
    try {
      return java.util.Optional.of(Long.parseLong(Files.readString(spec.pidFile()).strip()));
    } catch (IOException | NumberFormatException e) {
      return java.util.Optional.empty();
    }
  }
}

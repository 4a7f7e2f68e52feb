package io.etcfs.launcher.cli;

import io.etcfs.launcher.control.ControlClient;
import io.etcfs.launcher.node.NodeSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;

/** Stops a node: through its control socket, else SIGTERM, else SIGKILL, each bounded. */
final class NodeStopper {
  private NodeStopper() {}

  /** How long a mount root may take to answer before it counts as not answering. */
  private static final Duration STAT_BOUND = Duration.ofSeconds(5);

  /**
   * Stops the node and says how, for the user. A mount left behind by a node that died (or had
   * to be killed) is detached, so the next mount on that path works.
   */
  static String stop(NodeSpec spec) throws InterruptedException, IOException {
    return stop(spec, OptionalLong.empty());
  }

  /**
   * As {@link #stop(NodeSpec)}, for a node whose JVM is already known (found running rather than
   * through its pid file).
   */
  static String stop(NodeSpec spec, OptionalLong knownPid)
      throws InterruptedException, IOException {
    String how = stopProcess(spec, knownPid);
    return how + detachIfDead(spec.mountpoint());
  }

  /**
   * Detaches what is left at {@code mountpoint} only if it is an etcfs mount nobody serves: no
   * node JVM runs for it and its root does not answer. Another node may have mounted the same
   * path since this one stopped (a remount after an umount), and its mount must never be taken
   * away from under it.
   */
  static String detachIfDead(Path mountpoint) throws InterruptedException {
    if (!Mounts.isMounted(mountpoint)) {
      return "";
    }
    List<NodeProcesses.Node> serving = NodeProcesses.serving(List.of(mountpoint));
    if (!serving.isEmpty()) {
      NodeProcesses.Node n = serving.get(0);
      return "; " + mountpoint + " is served by node " + n.spec().nodeName() + " (pid " + n.pid()
          + "), left alone";
    }
    if (!Mounts.ETCFS_TYPE.equals(Mounts.fsType(mountpoint))) {
      return "; " + mountpoint + " has a " + Mounts.fsType(mountpoint) + " mount, left alone";
    }
    Mounts.Probe probe = Mounts.probe(mountpoint, STAT_BOUND);
    if (probe == Mounts.Probe.ANSWERS) {
      return "; the etcfs mount at " + mountpoint + " answers (another node serves it), left alone";
    }
    return Mounts.detach(mountpoint) ? "; its dead mount was detached"
        : "; its mount could not be detached (try: fusermount -u -z " + mountpoint + ")";
  }

  private static String stopProcess(NodeSpec spec, OptionalLong knownPid)
      throws InterruptedException, IOException {
    // A pid file outlives a node that was killed, and its pid may since belong to anything:
    // signal it only if it is this node's JVM.
    Optional<ProcessHandle> proc = (knownPid.isPresent()
        ? Optional.of(knownPid.getAsLong()) : NodeLauncher.pid(spec))
        .filter(pid -> NodeProcesses.isNode(pid, spec))
        .flatMap(ProcessHandle::of)
        .filter(ProcessHandle::isAlive);
    if (proc.isEmpty()) {
      Files.deleteIfExists(spec.socket());
      Files.deleteIfExists(spec.pidFile());
      return "was not running (stale records removed)";
    }
    ProcessHandle p = proc.get();
    try {
      String answer = ControlClient.ask(spec.socket(), "stop").output();
      if (waitExit(p, 60)) {
        return answer.contains("had fenced itself")
            ? "stopped; it had fenced itself earlier (lost its membership lease), so the others "
                + "recover it; mount again to rejoin as a new generation"
            : "left the cluster cleanly";
      }
    } catch (IOException e) {
      // No control socket (a node still starting, or a wedged one): fall back to signals.
    }
    p.destroy();
    if (waitExit(p, 30)) {
      return "stopped by SIGTERM";
    }
    p.destroyForcibly();
    waitExit(p, 10);
    return "killed (it did not stop within 90 s; its membership lease will expire)";
  }

  /**
   * Waits until the node has exited. A process that has exited but not been reaped yet (a zombie:
   * its parent, the init of a container, may reap only now and then) counts as exited.
   */
  private static boolean waitExit(ProcessHandle p, int seconds) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (p.isAlive() && !zombie(p.pid())) {
      if (System.nanoTime() > deadline) {
        return false;
      }
      Thread.sleep(20);
    }
    return true;
  }

  static boolean zombie(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
      // "pid (comm) S ...": the state follows the last ')' (a command may contain parentheses).
      int close = stat.lastIndexOf(')');
      return close > 0 && stat.length() > close + 2 && stat.charAt(close + 2) == 'Z';
    } catch (IOException e) {
      return true; // gone from /proc: exited and reaped
    }
  }

}

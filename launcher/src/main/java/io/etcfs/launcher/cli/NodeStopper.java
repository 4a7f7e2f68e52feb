package io.etcfs.launcher.cli;

import io.etcfs.launcher.control.ControlClient;
import io.etcfs.launcher.node.NodeSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/** Stops a node: through its control socket, else SIGTERM, else SIGKILL, each bounded. */
final class NodeStopper {
  private NodeStopper() {}

  /**
   * Stops the node and says how, for the user. A mount left behind by a node that died (or had
   * to be killed) is detached, so the next mount on that path works.
   */
  static String stop(NodeSpec spec) throws InterruptedException, IOException {
    String how = stopProcess(spec);
    if (Mounts.isMounted(spec.mountpoint())) {
      how += Mounts.detach(spec.mountpoint()) ? "; its dead mount was detached"
          : "; its mount could not be detached (try: fusermount -u -z " + spec.mountpoint() + ")";
    }
    return how;
  }

  private static String stopProcess(NodeSpec spec) throws InterruptedException, IOException {
    Optional<ProcessHandle> proc = NodeLauncher.pid(spec).flatMap(ProcessHandle::of)
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

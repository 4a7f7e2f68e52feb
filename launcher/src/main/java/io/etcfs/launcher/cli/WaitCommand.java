package io.etcfs.launcher.cli;

import io.etcfs.launcher.UserError;
import io.etcfs.launcher.node.NodeSpec;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * Waits until a node serves a mountpoint, as {@code etcfs mount} waits before it returns: the
 * node is registered for the path, answers {@code health} with ready, and its mount root answers
 * a stat from the etcfs mount. {@code mount --foreground} cannot say when that is (it runs the
 * node until it ends), so systemd's {@code etcfs@.service} runs this as {@code ExecStartPost=}:
 * the unit is started once the mount is usable, and units ordered after it start only then.
 */
@Command(name = "wait", mixinStandardHelpOptions = true,
    description = {"Wait until a node serves MOUNTPOINT: ready, and its mount answers (as 'etcfs"
        + " mount' waits before it returns).",
        "For nodes started with 'mount --foreground', e.g. by systemd's etcfs@.service.",
        "Exit status 0 once served; 1 if PID exits first or the timeout passes."})
final class WaitCommand implements Callable<Integer> {
  @Parameters(index = "0", paramLabel = "MOUNTPOINT") Path mountpoint;

  @Option(names = "--timeout", paramLabel = "DURATION", converter = Units.Time.class,
      defaultValue = "150s", description = "How long to wait (default: ${DEFAULT-VALUE}).")
  Duration timeout;

  @Option(names = "--pid", paramLabel = "PID",
      description = "Give up as soon as this process (the node, or the 'etcfs mount --foreground'"
          + " running it; systemd's $MAINPID) has exited.")
  Long pid;

  @Override
  public Integer call() throws InterruptedException {
    Path mp = mountpoint.toAbsolutePath().normalize();
    Optional<ProcessHandle> watched = Optional.empty();
    if (pid != null) {
      watched = ProcessHandle.of(pid).filter(h -> h.isAlive() && !NodeStopper.zombie(pid));
      if (watched.isEmpty()) {
        throw new UserError("process " + pid + " is not running, so nothing will serve " + mp);
      }
    }
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      Optional<NodeSpec> spec = MountRegistry.standard().find(mp).filter(NodeLauncher::alive);
      if (spec.isPresent() && NodeLauncher.healthy(spec.get())
          && NodeLauncher.notServing(spec.get()).isEmpty()) {
        System.out.println(mp + " is served by node " + spec.get().nodeName()
            + NodeLauncher.pid(spec.get()).map(p -> " (pid " + p + ")").orElse(""));
        return 0;
      }
      if (watched.isPresent() && (!watched.get().isAlive() || NodeStopper.zombie(pid))) {
        throw new UserError("process " + pid + " exited before " + mp + " was served");
      }
      if (System.nanoTime() > deadline) {
        throw new UserError(mp + " is not served after " + timeout.toSeconds() + " s"
            + spec.map(s -> " (node " + s.nodeName() + " runs but its mount does not answer)")
                .orElse(""));
      }
      Thread.sleep(100);
    }
  }
}

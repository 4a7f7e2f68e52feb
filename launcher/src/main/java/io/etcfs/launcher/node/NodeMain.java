package io.etcfs.launcher.node;

import io.etcfs.launcher.Failures;
import io.etcfs.launcher.control.ControlServer;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.logging.Logger;

/**
 * The entry point of a node's own JVM, started by {@code etcfs mount}: runs the Felix runtime,
 * waits until it is whole, then serves the control socket until the node is stopped (through the
 * socket, SIGTERM, or SIGINT in the foreground). Its output is the node's log; a start-up failure
 * ends with one line {@code etcfs: node <name> failed to start: <reason>} that the CLI relays.
 */
public final class NodeMain {
  /** How long the bundles may take to become whole; a cold JVM on a busy machine needs seconds. */
  private static final Duration START_TIMEOUT = Duration.ofSeconds(90);

  private static final Logger LOG = Logger.getLogger(NodeMain.class.getName());

  private final NodeSpec spec;
  private final NodeRuntime runtime;
  private static final StartupClock STARTUP = new StartupClock();
  private ControlServer control;
  private volatile boolean cleaned;
  /** Set when a stop begins: whether this incarnation had fenced itself (see ExitStatus). */
  private volatile boolean stoppedFenced;

  private NodeMain(NodeSpec spec, NodeRuntime runtime) {
    this.spec = spec;
    this.runtime = runtime;
  }

  public static void main(String[] args) {
    System.setProperty("java.util.logging.SimpleFormatter.format",
        "%1$tF %1$tT.%1$tL %4$s %3$s: %5$s%6$s%n");
    if (args.length < 1) {
      System.err.println("usage: NodeMain SPEC_FILE [--shell]");
      System.exit(ExitStatus.USAGE);
    }
    NodeSpec spec = NodeSpec.read(Path.of(args[0]));
    boolean shell = args.length > 1 && args[1].equals("--shell");
    int status;
    try {
      Files.writeString(spec.pidFile(), ProcessHandle.current().pid() + "\n");
      STARTUP.mark("jvm");
      spec.metrics().checkBindable();
      NodeRuntime runtime = NodeRuntime.start(spec, bundleDir(), shell, STARTUP);
      status = new NodeMain(spec, runtime).run();
    } catch (Exception | StartFailure e) {
      System.err.println("etcfs: node " + spec.nodeName() + " failed to start: "
          + Failures.describe(e));
      deleteQuietly(spec.pidFile());
      System.exit(ExitStatus.START_FAILED);
      return;
    }
    // The framework has stopped and the node has left: nothing is left to do, but threads that
    // libraries started and never ended (gRPC, Netty, vert.x pools linger for seconds) would keep
    // the JVM, and so `etcfs umount`, waiting. A node that had fenced itself says so in its
    // status, so that a supervisor does not start it again on its own (ExitStatus.FENCED).
    System.exit(status);
  }

  private static Path bundleDir() {
    String home = System.getProperty("etcfs.home");
    if (home == null) {
      throw new IllegalStateException("etcfs.home is not set (start nodes with bin/etcfs)");
    }
    return Path.of(home, "bundle");
  }

  /** Runs until the node is stopped; returns its exit status (see {@link ExitStatus}). */
  private int run() throws IOException, InterruptedException, StartFailure {
    awaitWhole();
    STARTUP.mark("components");
    control = ControlServer.start(spec.socket(), this::handle, r -> r.startsWith("exec "));
    Runtime.getRuntime().addShutdownHook(new Thread(this::shutdown, "etcfs-shutdown"));
    LOG.info("node " + spec.nodeName() + " READY: filesystem '" + spec.fsName() + "', control "
        + spec.socket() + "; started in " + STARTUP);
    runtime.awaitStop();
    cleanUp();
    int status = ExitStatus.ofStop(stoppedFenced);
    LOG.info("node " + spec.nodeName() + " stopped" + (stoppedFenced
        ? " (it had fenced itself: exit status " + status + ")" : ""));
    return status;
  }

  private void awaitWhole() throws InterruptedException, StartFailure {
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    Health.Report r = Health.check(runtime.context());
    while (!r.ready()) {
      if (r.failed() || System.nanoTime() > deadline) {
        r.problems().forEach(p -> LOG.warning(p));
        runtime.close();
        throw new StartFailure(mainProblem(r));
      }
      Thread.sleep(50);
      r = Health.check(runtime.context());
    }
  }

  /** The problem that explains the others: a failed activation rather than its dependents. */
  private static String mainProblem(Health.Report r) {
    return r.components().stream()
        .filter(c -> c.state().equals("FAILED_ACTIVATION"))
        .map(Health.Component::problem)
        .findFirst()
        .orElse(r.problems().get(0));
  }

  /**
   * {@code live}, {@code fenced} or {@code unknown}: asks the Membership service reflectively
   * (the launcher does not share the bundles' class space).
   */
  private String membershipState() {
    var ref = Services.find(runtime.context(), "io.etcfs.spi.fencing.Membership");
    Object m = ref == null ? null : runtime.context().getService(ref);
    if (m == null) {
      return "unknown";
    }
    try {
      return Boolean.TRUE.equals(m.getClass().getMethod("isFenced").invoke(m)) ? "fenced" : "live";
    } catch (ReflectiveOperationException | RuntimeException e) {
      return "unknown";
    } finally {
      runtime.context().ungetService(ref);
    }
  }

  private int handle(String request, PrintStream out) {
    String verb = request.split(" ", 2)[0];
    switch (verb) {
      case "health" -> {
        Health.Report r = Health.check(runtime.context());
        r.problems().forEach(out::println);
        out.println(r.ready() ? "ready" : "not ready");
        return r.ready() ? 0 : 1;
      }
      case "info" -> {
        out.println("node=" + spec.nodeName());
        out.println("fs=" + spec.fsName());
        out.println("pid=" + ProcessHandle.current().pid());
        out.println("mountpoint=" + spec.mountpoint());
        out.println("device=" + spec.device());
        out.println("log=" + spec.logFile());
        out.println("membership=" + membershipState());
        return 0;
      }
      case "stop" -> {
        LOG.info("stop requested through the control socket");
        boolean fenced = membershipState().equals("fenced");
        stoppedFenced = fenced;
        runtime.close();
        out.println(fenced ? "node " + spec.nodeName() + " had fenced itself and stopped"
            : "node " + spec.nodeName() + " left the cluster and stopped");
        return 0;
      }
      case "exec" -> {
        return GogoExec.execute(runtime.context(), request.substring(verb.length()).trim(), out);
      }
      case "commands" -> {
        return GogoExec.commands(runtime.context(), out);
      }
      default -> {
        out.println("etcfs: unknown control request '" + verb + "'");
        return 2;
      }
    }
  }

  /**
   * SIGTERM / SIGINT: leave cleanly (the framework stop releases the membership). The JVM then
   * exits with 143 (SIGTERM), which a supervisor may take as a clean stop; a node that had fenced
   * itself ends with {@link ExitStatus#FENCED} instead, so that it is never taken for one. Halting
   * from this hook once the framework has stopped loses nothing the other hooks would do: the
   * VM writes the class-data archive in its halt either way. (The node's log lines from a stop
   * by signal are mostly lost anyway: java.util.logging's own hook closes its handlers while
   * this one runs.)
   */
  private void shutdown() {
    if (cleaned) {
      return; // stopped through the control socket: main exits with the node's status
    }
    boolean fenced;
    try {
      fenced = stoppedFenced || membershipState().equals("fenced");
    } catch (RuntimeException e) {
      fenced = stoppedFenced; // a framework already stopping: what the stop request saw
    }
    stoppedFenced = fenced;
    runtime.close();
    cleanUp();
    if (fenced) {
      LOG.info("node " + spec.nodeName() + " stopped by a signal after it had fenced itself: "
          + "exit status " + ExitStatus.FENCED);
      Runtime.getRuntime().halt(ExitStatus.FENCED);
    }
  }

  private synchronized void cleanUp() {
    if (cleaned) {
      return;
    }
    cleaned = true;
    try {
      if (control != null) {
        control.close();
      }
    } catch (IOException e) {
      LOG.warning("closing the control socket: " + e.getMessage());
    }
    deleteQuietly(spec.pidFile());
  }

  private static void deleteQuietly(Path p) {
    try {
      Files.deleteIfExists(p);
    } catch (IOException e) {
      LOG.warning("cannot delete " + p + ": " + e.getMessage());
    }
  }

  /** The runtime did not become whole; the message is the one line the user sees. */
  static final class StartFailure extends Throwable {
    private static final long serialVersionUID = 1L;

    StartFailure(String message) {
      super(message, null, false, false);
    }
  }
}

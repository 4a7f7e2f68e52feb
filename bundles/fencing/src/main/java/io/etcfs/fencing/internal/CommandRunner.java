package io.etcfs.fencing.internal;

import io.etcfs.spi.fencing.FenceException;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs the external commands of the fence agents: bounded in time, standard input from
 * {@code /dev/null}, every line the command prints logged at INFO. A command still running when
 * its time is up is killed with its whole process tree: a fence agent that hangs must not hang
 * recovery, and must not leave a half-done fencing action running behind the recoverer's back.
 */
final class CommandRunner {
  private static final Logger LOG = System.getLogger(CommandRunner.class.getName());
  /**
   * How long to wait for the rest of the output once the command has exited: a child it left in
   * the background may hold the pipes open for good.
   */
  private static final Duration DRAIN = Duration.ofSeconds(1);
  private static final Duration REAP = Duration.ofSeconds(5);

  /** What a finished command did. */
  record Result(int exit, List<String> out, List<String> err) {
    /** The last non-blank line on standard error: usually the one that says what went wrong. */
    String lastErrLine() {
      for (int i = err.size() - 1; i >= 0; i--) {
        if (!err.get(i).isBlank()) {
          return err.get(i).strip();
        }
      }
      return "(nothing on standard error)";
    }
  }

  private CommandRunner() {}

  /**
   * Runs {@code argv} with {@code env} added to this process's environment.
   *
   * @param label names the command in log lines and messages
   * @param missing the message when {@code argv[0]} does not exist
   * @throws FenceException if the command cannot be started or did not finish in time
   */
  static Result run(String label, List<String> argv, Map<String, String> env, TimeBudget budget,
      String missing) throws FenceException {
    Duration timeout = budget.remaining(label);
    Process p = start(label, argv, env, missing);
    Lines out = new Lines(p.getInputStream(), label);
    Lines err = new Lines(p.getErrorStream(), label);
    try {
      if (!p.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
        killTree(p);
        throw new FenceException(label + " timed out after " + TimeBudget.text(budget.total()));
      }
    } catch (InterruptedException e) {
      killTree(p);
      Thread.currentThread().interrupt();
      throw new FenceException(label + " was interrupted", e);
    }
    return new Result(p.exitValue(), out.await(), err.await());
  }

  private static Process start(String label, List<String> argv, Map<String, String> env,
      String missing) throws FenceException {
    ProcessBuilder pb = new ProcessBuilder(argv)
        .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
    pb.environment().putAll(env);
    try {
      return pb.start();
    } catch (IOException e) {
      String m = String.valueOf(e.getMessage());
      throw new FenceException(m.contains("error=2,") ? missing : "cannot run " + label + ": " + m, e);
    }
  }

  /**
   * Kills the process and every process it started. The descendants are listed before the process
   * is killed (once it is dead its children are re-parented and no longer found through it), and
   * the process is killed before them so that a shell cannot start its next command in between.
   */
  static void killTree(Process p) {
    List<ProcessHandle> descendants = p.descendants().toList();
    p.destroyForcibly();
    descendants.forEach(ProcessHandle::destroyForcibly);
    try {
      p.waitFor(REAP.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** One output stream of a command, read on a thread of its own so the command never blocks. */
  private static final class Lines {
    private final List<String> lines = Collections.synchronizedList(new ArrayList<>());
    private final Thread reader;

    Lines(InputStream in, String label) {
      reader = new Thread(() -> read(in, label), "etcfs-fence-output");
      reader.setDaemon(true);
      reader.start();
    }

    private void read(InputStream in, String label) {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
        for (String line = r.readLine(); line != null; line = r.readLine()) {
          lines.add(line);
          LOG.log(Level.INFO, "{0}: {1}", label, line);
        }
      } catch (IOException e) {
        // the stream closes when the process is killed: what was read so far is all there is
      }
    }

    List<String> await() throws FenceException {
      try {
        reader.join(DRAIN.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new FenceException("interrupted while reading a command's output", e);
      }
      synchronized (lines) {
        return List.copyOf(lines);
      }
    }
  }
}

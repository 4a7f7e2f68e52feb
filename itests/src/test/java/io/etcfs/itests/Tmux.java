package io.etcfs.itests;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * A real terminal for tests: one tmux session on a tmux server of its own (its own socket
 * name), so closing it never touches anybody else's tmux. Keys go in with send-keys, the
 * screen comes back with capture-pane; waits poll the screen against a deadline.
 */
final class Tmux implements AutoCloseable {
  private final String server;
  private final String session = "t";

  private Tmux(String server) {
    this.server = server;
  }

  static boolean installed() {
    try {
      Process p = new ProcessBuilder("tmux", "-V").redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
      return p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0;
    } catch (IOException | InterruptedException e) {
      return false;
    }
  }

  /** Starts {@code command} (a shell command line) in a 120 × 40 terminal. */
  static Tmux start(String command) throws IOException, InterruptedException {
    Tmux t = new Tmux("etcfs-it-" + ProcessHandle.current().pid() + "-" + System.nanoTime());
    t.tmux("new-session", "-d", "-s", t.session, "-x", "120", "-y", "40", command);
    return t;
  }

  /** Types {@code keys}: literal text, or tmux key names such as Enter, Tab, C-c. */
  void send(String... keys) throws IOException, InterruptedException {
    // "--": a key that starts with '-' (an option being typed) is not one of tmux's flags.
    List<String> args = new ArrayList<>(List.of("send-keys", "-t", session, "--"));
    args.addAll(List.of(keys));
    tmux(args.toArray(new String[0]));
  }

  /** The visible screen, trailing blank lines dropped. */
  String screen() throws IOException, InterruptedException {
    return tmux("capture-pane", "-p", "-t", session).stripTrailing();
  }

  /** Polls the screen until {@code ok} holds; fails with the last screen after {@code limit}. */
  String await(String what, Duration limit, Predicate<String> ok)
      throws IOException, InterruptedException {
    long deadline = System.nanoTime() + limit.toNanos();
    String s = screen();
    while (!ok.test(s)) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("terminal never showed " + what + "; screen:\n" + s);
      }
      Thread.sleep(100);
      s = screen();
    }
    return s;
  }

  /** The screen's last non-blank line: the line being edited at a prompt. */
  static String lastLine(String screen) {
    List<String> lines = screen.lines().filter(l -> !l.isBlank()).toList();
    return lines.isEmpty() ? "" : lines.get(lines.size() - 1).stripTrailing();
  }

  private String tmux(String... args) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>(List.of("tmux", "-L", server));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new IOException("tmux " + String.join(" ", args) + " failed: " + out);
    }
    return out;
  }

  /** Ends the session and its server, and with them whatever still runs in the terminal. */
  @Override
  public void close() throws IOException, InterruptedException {
    new ProcessBuilder("tmux", "-L", server, "kill-server").redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.DISCARD).start().waitFor(30, TimeUnit.SECONDS);
  }
}

package io.etcfs.launcher.cli;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.jline.reader.EndOfFileException;
import org.jline.reader.LineReader;
import org.jline.reader.LineReaderBuilder;
import org.jline.reader.UserInterruptException;
import org.jline.terminal.Terminal;
import org.jline.terminal.TerminalBuilder;
import org.jline.utils.InfoCmp;

/**
 * {@code etcfs shell} on a terminal: JLine line editing with history and completion, one
 * command line at a time sent to the node. Ctrl-C at the prompt clears the line; while a command
 * runs it stops waiting for it (the node interrupts it, as Gogo's own shell does).
 * {@code exit} or Ctrl-D leaves.
 */
final class InteractiveShell {
  /**
   * JLine reports what it cannot do (save the history to an unwritable file, say) as a warning
   * with a stack trace; the CLI never shows stack traces, and the shell works on without them.
   * Held in a field: the logging framework keeps loggers weakly, and with them their level.
   */
  private static final Logger JLINE_LOG = Logger.getLogger("org.jline");
  private final NodeLink node;

  InteractiveShell(NodeLink node) {
    this.node = node;
  }

  /** Runs until {@code exit} or end of input; returns the last command's status. */
  int run() throws IOException {
    JLINE_LOG.setLevel(Level.SEVERE);
    node.requireRunning();
    List<String> commands = node.commands();
    try (Terminal terminal = TerminalBuilder.builder().system(true).build()) {
      LineReader reader = LineReaderBuilder.builder()
          .terminal(terminal)
          .appName("etcfs")
          .completer(new ShellCompleter(() -> commands, node::complete))
          .variable(LineReader.HISTORY_FILE, historyFile())
          .build();
      terminal.handle(Terminal.Signal.INT, sig -> node.abandon());
      return loop(reader, terminal);
    }
  }

  private int loop(LineReader reader, Terminal terminal) {
    PrintStream out = new PrintStream(terminal.output(), true, StandardCharsets.UTF_8);
    String prompt = node.nodeName() + "$ ";
    int status = 0;
    while (true) {
      String line;
      try {
        line = reader.readLine(prompt).strip();
      } catch (UserInterruptException e) {
        continue;
      } catch (EndOfFileException e) {
        return status;
      }
      Integer exit = exitStatus(line, status);
      if (exit != null) {
        return exit;
      }
      if (line.equals("clear")) {
        // Gogo's clear draws on the node's terminal; this one is here.
        terminal.puts(InfoCmp.Capability.clear_screen);
        terminal.flush();
      } else if (!line.isEmpty()) {
        status = node.exec(line, out);
        if (status == NodeLink.INTERRUPTED) {
          out.println("etcfs: stopped waiting for '" + line + "'; " + node.nodeName()
              + " was asked to interrupt it");
        }
      }
    }
  }

  /** {@code exit} leaves with the last status, {@code exit N} with N; anything else is null. */
  static Integer exitStatus(String line, int last) {
    String[] w = line.split("\\s+");
    if (!w[0].equals("exit") || w.length > 2) {
      return null;
    }
    try {
      return w.length == 1 ? last : Integer.parseInt(w[1]);
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /**
   * {@code $ETCFS_HISTORY}, else {@code $XDG_STATE_HOME/etcfs/shell_history}, else
   * {@code ~/.etcfs_history}: the user's own, never the node's state dir (which goes with it).
   */
  static Path historyFile() {
    String explicit = System.getenv("ETCFS_HISTORY");
    if (explicit != null && !explicit.isBlank()) {
      return Path.of(explicit);
    }
    String state = System.getenv("XDG_STATE_HOME");
    if (state != null && !state.isBlank()) {
      return Path.of(state, "etcfs", "shell_history");
    }
    return Path.of(System.getProperty("user.home"), ".etcfs_history");
  }
}

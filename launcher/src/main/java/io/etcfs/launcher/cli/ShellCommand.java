package io.etcfs.launcher.cli;

import io.etcfs.launcher.node.NodeSpec;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(name = "shell", mixinStandardHelpOptions = true,
    description = {"Run shell commands on the node serving MOUNTPOINT (Felix Gogo: lb, scr:list,"
        + " members, lock backend, ...).",
        "On a terminal: line editing, history, Tab completion; Ctrl-C clears the line or stops"
        + " waiting for a command; exit or Ctrl-D leaves.",
        "Otherwise reads commands line by line until EOF or 'exit'.",
        "Exit status: the last command's (with -c: that command's); 1 if the node is not"
        + " running."})
final class ShellCommand implements Callable<Integer> {
  @Parameters(index = "0", paramLabel = "MOUNTPOINT") Path mountpoint;

  @Option(names = {"-c", "--command"}, paramLabel = "COMMAND",
      description = "Run one command and exit with its status.")
  String command;

  @Override
  public Integer call() throws IOException {
    NodeSpec spec = MountRegistry.standard().require(mountpoint);
    NodeLink node = new NodeLink(spec);
    if (command != null) {
      return node.exec(command, System.out);
    }
    if (System.console() != null) {
      return new InteractiveShell(node).run();
    }
    return lineByLine(node);
  }

  /** Not on a terminal (a script, a pipe): no prompt, one command a line, until EOF or exit. */
  private static int lineByLine(NodeLink node) throws IOException {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    int status = 0;
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      Integer exit = InteractiveShell.exitStatus(line.strip(), status);
      if (exit != null) {
        return exit;
      }
      if (!line.isBlank()) {
        status = node.exec(line, System.out);
      }
    }
    return status;
  }
}

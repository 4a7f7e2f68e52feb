package io.etcfs.launcher.cli;

import io.etcfs.launcher.control.ControlClient;
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
        + " members, lock backend, ...).", "Without -c, reads commands line by line until EOF or 'exit'."})
final class ShellCommand implements Callable<Integer> {
  @Parameters(index = "0", paramLabel = "MOUNTPOINT") Path mountpoint;

  @Option(names = {"-c", "--command"}, paramLabel = "COMMAND",
      description = "Run one command and exit with its status.")
  String command;

  @Override
  public Integer call() throws IOException {
    NodeSpec spec = MountRegistry.standard().require(mountpoint);
    if (command != null) {
      return exec(spec, command);
    }
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    boolean tty = System.console() != null;
    int status = 0;
    while (true) {
      if (tty) {
        System.out.print(spec.nodeName() + "$ ");
        System.out.flush();
      }
      String line = in.readLine();
      if (line == null || line.strip().equals("exit")) {
        return status;
      }
      if (!line.isBlank()) {
        status = exec(spec, line);
      }
    }
  }

  private static int exec(NodeSpec spec, String line) {
    try {
      return ControlClient.call(spec.socket(), "exec " + line, System.out);
    } catch (IOException e) {
      throw new io.etcfs.launcher.UserError("cannot reach node " + spec.nodeName() + " at "
          + spec.socket() + ": " + e.getMessage() + " (is it running?)");
    }
  }
}

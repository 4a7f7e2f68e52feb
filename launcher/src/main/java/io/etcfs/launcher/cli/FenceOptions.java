package io.etcfs.launcher.cli;

import io.etcfs.launcher.node.FenceSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** How a node's recovery cuts a dead node off: shared by {@code mount} and {@code up}. */
final class FenceOptions {
  @Spec(Spec.Target.MIXEE) CommandSpec mixee;

  @Option(names = "--fence-agent", paramLabel = "AGENT", defaultValue = "none",
      description = "How recovery cuts a dead node off: none, exec or reservation "
          + "(default: ${DEFAULT-VALUE}); see docs/fence-agents.md.")
  String agent;

  @Option(names = "--fence-command", paramLabel = "CMD",
      description = "With --fence-agent exec: the shell command that fences a node (it gets "
          + "ETCFS_FENCE_NODE, ETCFS_FENCE_GENERATION, ETCFS_FENCE_FS; exit 0 = fenced).")
  String command;

  @Option(names = "--fence-timeout", paramLabel = "DURATION", converter = Units.Time.class,
      defaultValue = "30s", description = "The most one fence call may take "
          + "(default: ${DEFAULT-VALUE}).")
  Duration timeout;

  /** The checked settings; bad combinations are bad usage, reported before anything starts. */
  FenceSpec spec() {
    try {
      return FenceSpec.of(agent, command, timeout);
    } catch (IllegalArgumentException e) {
      throw badUsage(e.getMessage());
    }
  }

  ParameterException badUsage(String message) {
    return new ParameterException(mixee.commandLine(), message);
  }

  /** Persistent reservations live on a block device; an image file has none. */
  void requireReservableDevice(FenceSpec spec, Path device) {
    if (spec.agent().equals("reservation") && Files.isRegularFile(device)) {
      throw badUsage("--fence-agent reservation needs a shared block device with persistent "
          + "reservations; " + device + " is a regular file");
    }
  }
}

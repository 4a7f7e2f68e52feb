package io.etcfs.launcher.node;

import java.time.Duration;
import java.util.List;
import java.util.Properties;

/**
 * Which fence agent the node's recovery runs against a dead node, and for how long at most.
 *
 * @param agent {@code none}, {@code exec} or {@code reservation}
 * @param command the shell command of the {@code exec} agent; empty for the others
 * @param timeoutSeconds how long one fence (or register) call may take
 */
public record FenceSpec(String agent, String command, int timeoutSeconds) {
  public static final List<String> AGENTS = List.of("none", "exec", "reservation");
  public static final int DEFAULT_TIMEOUT_SECONDS = 30;
  public static final FenceSpec NONE = new FenceSpec("none", "", DEFAULT_TIMEOUT_SECONDS);

  /** Checks the combination; every message is one line in command-line terms. */
  public FenceSpec {
    if (!AGENTS.contains(agent)) {
      throw new IllegalArgumentException("unknown fence agent '" + agent
          + "' (none, exec or reservation)");
    }
    command = command == null ? "" : command;
    if (agent.equals("exec") && command.isBlank()) {
      throw new IllegalArgumentException("--fence-agent exec needs --fence-command CMD");
    }
    if (!agent.equals("exec") && !command.isEmpty()) {
      throw new IllegalArgumentException("--fence-command is only for --fence-agent exec (got "
          + "--fence-agent " + agent + ")");
    }
    if (timeoutSeconds < 1) {
      throw new IllegalArgumentException("--fence-timeout must be positive");
    }
  }

  /** From the command line: a timeout that is not a whole number of seconds is rounded up. */
  public static FenceSpec of(String agent, String command, Duration timeout) {
    if (timeout.isZero() || timeout.isNegative()) {
      throw new IllegalArgumentException("--fence-timeout must be positive (got "
          + (timeout.toMillis() % 1000 == 0 ? timeout.toSeconds() + "s" : timeout.toMillis() + "ms")
          + ")");
    }
    long seconds = timeout.plusNanos(999_999_999L).toSeconds();
    return new FenceSpec(agent, command, (int) Math.min(Integer.MAX_VALUE, seconds));
  }

  void store(Properties p) {
    p.setProperty("fence.agent", agent);
    p.setProperty("fence.command", command);
    p.setProperty("fence.timeoutSeconds", Integer.toString(timeoutSeconds));
  }

  /** A spec written before fence agents existed has none. */
  static FenceSpec load(Properties p) {
    return new FenceSpec(p.getProperty("fence.agent", "none"), p.getProperty("fence.command", ""),
        Integer.parseInt(p.getProperty("fence.timeoutSeconds",
            Integer.toString(DEFAULT_TIMEOUT_SECONDS))));
  }
}

package io.etcfs.support.shell;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The words a shell command was given, split into known flags and operands. Every command takes
 * its words the same way — {@code public String NAME(String... args)}, which Gogo matches for any
 * number of words — and parses them here, so {@code -h}/{@code --help} and the message for an
 * unknown option are the same everywhere.
 *
 * <pre>
 *   Args a = Args.parse("locks", "locks [--all] [--json]", args, 0, 0, "--all", "--json");
 *   if (a.help()) {
 *     return a.usage();
 *   }
 * </pre>
 */
public final class Args {
  private static final Set<String> HELP = Set.of("-h", "--help");

  private final String usage;
  private final Set<String> flags;
  private final List<String> operands;

  private Args(String usage, Set<String> flags, List<String> operands) {
    this.usage = usage;
    this.flags = flags;
    this.operands = operands;
  }

  /**
   * Splits {@code words} into flags (each one of {@code known}, or {@code -h}/{@code --help})
   * and between {@code min} and {@code max} operands.
   *
   * @throws IllegalArgumentException with a one-line message naming the command and its usage,
   *     for an unknown option or a wrong number of operands
   */
  public static Args parse(String command, String usage, String[] words, int min, int max,
      String... known) {
    Set<String> flags = new TreeSet<>();
    List<String> operands = new ArrayList<>();
    for (String word : words == null ? new String[0] : words) {
      if (HELP.contains(word) || Set.of(known).contains(word)) {
        flags.add(word);
      } else if (word.startsWith("-") && word.length() > 1) {
        throw new IllegalArgumentException(command + ": unknown option " + word + " (usage: "
            + usage + ")");
      } else {
        operands.add(word);
      }
    }
    Args args = new Args(usage, flags, operands);
    if (!args.help() && (operands.size() < min || operands.size() > max)) {
      throw new IllegalArgumentException(command + ": expected " + expected(min, max)
          + ", got " + operands.size() + " (usage: " + usage + ")");
    }
    return args;
  }

  private static String expected(int min, int max) {
    if (min == max) {
      return min == 0 ? "no operands" : min + (min == 1 ? " operand" : " operands");
    }
    return min + " to " + max + " operands";
  }

  /** True if {@code -h} or {@code --help} was given: the command should return {@link #usage}. */
  public boolean help() {
    return flags.contains("-h") || flags.contains("--help");
  }

  public boolean has(String flag) {
    return flags.contains(flag);
  }

  public List<String> operands() {
    return List.copyOf(operands);
  }

  public String usage() {
    return "usage: " + usage;
  }
}

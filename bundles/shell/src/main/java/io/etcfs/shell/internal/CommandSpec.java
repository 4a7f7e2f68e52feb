package io.etcfs.shell.internal;

import io.etcfs.spi.shell.Completion;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * One function's completion entry ({@link Completion#PROPERTY}): its options, and for each
 * operand the alternatives — literal words, or {@code @kind} for a completion source.
 */
record CommandSpec(String function, List<String> options, List<List<String>> operands) {
  CommandSpec {
    options = List.copyOf(options);
    operands = operands.stream().map(List::copyOf).toList();
  }

  /**
   * Parses {@code "fence @node --yes -h"}.
   *
   * @throws IllegalArgumentException for an empty entry or an empty alternative
   */
  static CommandSpec parse(String entry) {
    List<String> words = Arrays.stream(entry.strip().split("\\s+"))
        .filter(w -> !w.isEmpty()).toList();
    if (words.isEmpty()) {
      throw new IllegalArgumentException("an empty " + Completion.PROPERTY + " entry");
    }
    List<String> options = new ArrayList<>();
    List<List<String>> operands = new ArrayList<>();
    for (String w : words.subList(1, words.size())) {
      if (w.startsWith("-")) {
        options.add(w);
      } else {
        List<String> alternatives = Arrays.asList(w.split("\\|", -1));
        if (alternatives.stream().anyMatch(a -> a.isEmpty() || a.equals("@"))) {
          throw new IllegalArgumentException("an empty alternative in '" + entry + "'");
        }
        operands.add(alternatives);
      }
    }
    return new CommandSpec(words.get(0), options, operands);
  }
}

package io.etcfs.shell.internal;

import io.etcfs.spi.shell.Candidate;
import io.etcfs.spi.shell.CompletionSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * What the word under the cursor can become, for one command line: an option of the command
 * (when the word starts with '-', or when every operand is given), else the alternatives of the
 * operand at the cursor. The same answers for {@code etcfs shell} and the node's own shell.
 */
final class Completer {
  private static final Logger LOG = Logger.getLogger(Completer.class.getName());

  private final Map<String, CommandSpec> specs;
  private final Function<String, List<CompletionSource>> sources;

  /**
   * @param specs the completion entries by function name (without scope)
   * @param sources the completion sources of a kind
   */
  Completer(Map<String, CommandSpec> specs, Function<String, List<CompletionSource>> sources) {
    this.specs = specs;
    this.sources = sources;
  }

  /**
   * @param words the command line's words, the command first
   * @param index which word the cursor is in (at least 1: command names are completed by the
   *     shells themselves)
   * @param word that word up to the cursor
   */
  List<Candidate> complete(List<String> words, int index, String word) {
    if (index < 1 || words.isEmpty()) {
      return List.of();
    }
    String command = words.get(0);
    int colon = command.indexOf(':');
    if (colon >= 0 && !command.substring(0, colon).equals("etcfs")) {
      return List.of();
    }
    CommandSpec spec = specs.get(command.substring(colon + 1));
    if (spec == null) {
      return List.of();
    }
    List<String> before = words.subList(1, Math.min(index, words.size()));
    int operand = (int) before.stream().filter(w -> !w.startsWith("-")).count();
    if (word.startsWith("-") || operand >= spec.operands().size()) {
      return options(spec, before, word);
    }
    List<Candidate> out = new ArrayList<>();
    for (String alternative : spec.operands().get(operand)) {
      if (alternative.startsWith("@")) {
        out.addAll(fromSources(alternative.substring(1), word));
      } else if (alternative.startsWith(word)) {
        out.add(Candidate.of(alternative));
      }
    }
    return out;
  }

  private static List<Candidate> options(CommandSpec spec, List<String> given, String word) {
    return spec.options().stream()
        .filter(o -> o.startsWith(word) && !given.contains(o))
        .map(Candidate::of)
        .toList();
  }

  private List<Candidate> fromSources(String kind, String word) {
    List<Candidate> out = new ArrayList<>();
    for (CompletionSource source : sources.apply(kind)) {
      try {
        out.addAll(source.complete(word));
      } catch (RuntimeException e) {
        // A Tab must never fail the shell: a source that cannot answer offers nothing.
        LOG.log(Level.FINE, "completion source of " + kind + " failed", e);
      }
    }
    return out;
  }
}

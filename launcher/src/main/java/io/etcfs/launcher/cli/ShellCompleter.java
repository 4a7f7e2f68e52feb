package io.etcfs.launcher.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.BiFunction;
import java.util.function.Supplier;
import org.jline.reader.Candidate;
import org.jline.reader.Completer;
import org.jline.reader.LineReader;
import org.jline.reader.ParsedLine;

/**
 * Tab completion for {@code etcfs shell}. Command names (as the node lists them, with and
 * without their scope) are completed here; every other word is asked of the node, whose shell
 * bundle answers from the commands' completion entries — node names, paths, inode numbers,
 * options — exactly as in the node's own shell.
 */
final class ShellCompleter implements Completer {
  private static final Set<String> SEPARATORS = Set.of("|", ";", "&&", "||");
  /**
   * Gogo commands that need the node's own terminal (a pager, an editor, job control) and so
   * do nothing useful through the control socket: not offered.
   */
  private static final Set<String> TERMINAL_ONLY = Set.of("bg", "fg", "jobs", "gosh", "sh",
      "keymap", "widget", "less", "nano", "tmux", "ttop", "history", "watch");

  private final Supplier<List<String>> commands;
  private final BiFunction<List<String>, Integer, List<io.etcfs.spi.shell.Candidate>> node;

  /**
   * @param commands the node's commands, {@code scope:function}
   * @param node asks the node for the candidates of word {@code index} of a command's words
   *     (the command first, the word under the cursor cut at the cursor)
   */
  ShellCompleter(Supplier<List<String>> commands,
      BiFunction<List<String>, Integer, List<io.etcfs.spi.shell.Candidate>> node) {
    this.commands = commands;
    this.node = node;
  }

  @Override
  public void complete(LineReader reader, ParsedLine line, List<Candidate> candidates) {
    List<String> words = line.words();
    int index = line.wordIndex();
    int start = index - 1;
    while (start >= 0 && !SEPARATORS.contains(words.get(start))) {
      start--;
    }
    if (start + 1 == index) {
      commandNames().forEach(n -> candidates.add(new Candidate(n)));
      return;
    }
    List<String> command = new ArrayList<>(words.subList(start + 1, index));
    command.add(line.word().substring(0, Math.min(line.wordCursor(), line.word().length())));
    for (io.etcfs.spi.shell.Candidate c : node.apply(command, command.size() - 1)) {
      candidates.add(new Candidate(c.value(), c.display(), null, c.description(), null, null,
          c.complete()));
    }
  }

  private Set<String> commandNames() {
    Set<String> names = new TreeSet<>();
    for (String c : commands.get()) {
      String f = c.substring(c.indexOf(':') + 1);
      // Functions starting with '_' are completion helpers (Gogo's __files, etcfs:_complete).
      if (!f.startsWith("_") && !TERMINAL_ONLY.contains(f)) {
        names.add(c);
        names.add(f);
      }
    }
    names.add("exit");
    return names;
  }
}

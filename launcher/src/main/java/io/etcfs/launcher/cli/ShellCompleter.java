package io.etcfs.launcher.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.jline.reader.Candidate;
import org.jline.reader.Completer;
import org.jline.reader.LineReader;
import org.jline.reader.ParsedLine;

/**
 * Tab completion for {@code etcfs shell}: command names (as the node lists them, with and
 * without their scope), member names after {@code fence} and {@code members}, and paths below
 * the mountpoint after {@code inode} and {@code extents}. Paths are completed here, not on the
 * node: the shell runs on the node's machine and sees the same mount.
 */
final class ShellCompleter implements Completer {
  private static final Set<String> NODE_ARGS = Set.of("fence", "members");
  private static final Set<String> PATH_ARGS = Set.of("inode", "extents");
  private static final Set<String> SEPARATORS = Set.of("|", ";", "&&", "||");
  /**
   * Gogo commands that need the node's own terminal (a pager, an editor, job control) and so
   * do nothing useful through the control socket: not offered.
   */
  private static final Set<String> TERMINAL_ONLY = Set.of("bg", "fg", "jobs", "gosh", "sh",
      "keymap", "widget", "less", "nano", "tmux", "ttop", "history", "watch");

  private final Supplier<List<String>> commands;
  private final Supplier<List<String>> members;
  private final Path mountpoint;

  /**
   * @param commands the node's commands, {@code scope:function}
   * @param members the cluster's member names (asked for on each completion that needs them:
   *     members come and go)
   * @param mountpoint the absolute mountpoint the node serves
   */
  ShellCompleter(Supplier<List<String>> commands, Supplier<List<String>> members, Path mountpoint) {
    this.commands = commands;
    this.members = members;
    this.mountpoint = mountpoint.toAbsolutePath().normalize();
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
    String command = function(words.get(start + 1));
    String word = line.word();
    if (NODE_ARGS.contains(command) && !word.startsWith("-")) {
      members.get().forEach(n -> candidates.add(new Candidate(n)));
    } else if (PATH_ARGS.contains(command)) {
      paths(word).forEach(candidates::add);
    }
  }

  private Set<String> commandNames() {
    Set<String> names = new TreeSet<>();
    for (String c : commands.get()) {
      String f = function(c);
      // Gogo's "__files"-style functions are its own completion helpers, not commands.
      if (!f.startsWith("_") && !TERMINAL_ONLY.contains(f)) {
        names.add(c);
        names.add(f);
      }
    }
    names.add("exit");
    return names;
  }

  private static String function(String command) {
    return command.substring(command.indexOf(':') + 1);
  }

  /** Entries below the mountpoint that {@code word} can grow into; directories end in '/'. */
  List<Candidate> paths(String word) {
    String root = mountpoint.toString();
    if (word.length() <= root.length()) {
      return root.startsWith(word) ? List.of(dir(root)) : List.of();
    }
    if (!word.startsWith(root + "/")) {
      return List.of();
    }
    int slash = word.lastIndexOf('/');
    Path dir = Path.of(word.substring(0, slash + 1)).normalize();
    if (!dir.startsWith(mountpoint)) {
      return List.of();
    }
    String prefix = word.substring(slash + 1);
    String base = word.substring(0, slash + 1);
    try (Stream<Path> entries = Files.list(dir)) {
      return entries
          .filter(p -> p.getFileName().toString().startsWith(prefix))
          .map(p -> Files.isDirectory(p) ? dir(base + p.getFileName())
              : new Candidate(base + p.getFileName(), p.getFileName().toString(), null, null,
                  null, null, true))
          .sorted()
          .toList();
    } catch (IOException | RuntimeException e) {
      // An unreadable or vanished directory simply offers nothing.
      return List.of();
    }
  }

  /** A directory: completed with its slash, and the word stays open for the next name. */
  private static Candidate dir(String path) {
    return new Candidate(path + "/", path + "/", null, null, null, null, false);
  }
}

package io.etcfs.shell.internal;

import io.etcfs.spi.shell.Candidate;
import io.etcfs.spi.shell.Completion;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.felix.service.command.CommandSession;
import org.apache.felix.service.command.Descriptor;
import org.jline.reader.ParsedLine;

/**
 * The two Gogo functions behind completion. Their names start with '_', which both shells
 * leave out of the command names they offer.
 *
 * <ul>
 *   <li>{@code _complete}: called by gogo.jline's completer (through {@link SessionCompletions})
 *       with the line being edited in the session variable {@code .commandLine}; returns JLine
 *       candidates.
 *   <li>{@code _candidates INDEX W...}: the same for {@code etcfs shell}, over the control
 *       socket: each word as {@link Completion#encodeWord} encodes it, one candidate a line as
 *       {@link Candidate#line()} writes it.
 * </ul>
 */
public final class CompleteCommand {
  static final String COMMAND_LINE = ".commandLine";

  private final Registry registry;

  CompleteCommand(Registry registry) {
    this.registry = registry;
  }

  /** gogo.jline: candidates for the line in {@code .commandLine}. */
  @Descriptor("completion helper of the node's own shell (Tab), not a command to type")
  public List<org.jline.reader.Candidate> _complete(CommandSession session) {
    if (!(session.get(COMMAND_LINE) instanceof ParsedLine line)) {
      return List.of();
    }
    String word = line.word().substring(0, Math.min(line.wordCursor(), line.word().length()));
    List<org.jline.reader.Candidate> out = new ArrayList<>();
    for (Candidate c : registry.completer().complete(line.words(), line.wordIndex(), word)) {
      out.add(new org.jline.reader.Candidate(c.value(), c.display(), null, c.description(),
          null, null, c.complete()));
    }
    return out;
  }

  /** {@code etcfs shell}: candidates for encoded words, as lines. */
  @Descriptor("completion helper of etcfs shell (Tab), not a command to type")
  public String _candidates(String index, String... words) {
    int at;
    try {
      at = Integer.parseInt(index);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("_candidates: not a word index: " + index);
    }
    List<String> decoded = new ArrayList<>();
    for (String w : words) {
      try {
        decoded.add(Completion.decodeWord(w));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("_candidates: " + e.getMessage());
      }
    }
    if (at < 0 || at >= decoded.size()) {
      throw new IllegalArgumentException("_candidates: word index " + at + " outside the "
          + decoded.size() + " words given");
    }
    return registry.completer().complete(decoded, at, decoded.get(at)).stream()
        .map(Candidate::line)
        .collect(Collectors.joining("\n"));
  }
}

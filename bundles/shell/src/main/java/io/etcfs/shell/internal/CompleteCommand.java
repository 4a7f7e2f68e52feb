package io.etcfs.shell.internal;

import io.etcfs.spi.shell.Candidate;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
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
 *       socket: each word is {@code w} followed by its UTF-8 bytes in unpadded base64url (so no
 *       word, even an empty one or one with quotes, reaches Gogo's parser as anything but a
 *       plain string); the answer is one candidate a line, {@code c|p VALUE DESCRIPTION}, c for
 *       a finished word and p for one that goes on (a directory), the two fields URL-encoded,
 *       a description of {@code -} for none.
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
      out.add(new org.jline.reader.Candidate(c.value(), display(c), null, c.description(), null,
          null, c.complete()));
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
      decoded.add(decode(w));
    }
    if (at < 0 || at >= decoded.size()) {
      throw new IllegalArgumentException("_candidates: word index " + at + " outside the "
          + decoded.size() + " words given");
    }
    return registry.completer().complete(decoded, at, decoded.get(at)).stream()
        .map(c -> (c.complete() ? "c " : "p ") + encode(c.value()) + " "
            + (c.description() == null ? "-" : encode(c.description())))
        .collect(Collectors.joining("\n"));
  }

  /** The shown name of a candidate: the last part of a path, the whole of anything else. */
  static String display(Candidate c) {
    String v = c.value();
    String trimmed = v.endsWith("/") ? v.substring(0, v.length() - 1) : v;
    int slash = trimmed.lastIndexOf('/');
    return slash < 0 ? v : v.substring(slash + 1);
  }

  static String decode(String word) {
    if (!word.startsWith("w")) {
      throw new IllegalArgumentException("_candidates: a word not encoded as w<base64url>: "
          + word);
    }
    try {
      return new String(Base64.getUrlDecoder().decode(word.substring(1)),
          StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("_candidates: a word not encoded as w<base64url>: "
          + word);
    }
  }

  private static String encode(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }
}

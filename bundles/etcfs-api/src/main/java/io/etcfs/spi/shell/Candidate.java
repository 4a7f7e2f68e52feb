package io.etcfs.spi.shell;

import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * One completion the shell may offer for the word under the cursor.
 *
 * @param value what replaces the word
 * @param description shown beside it in the list (a node's state, an inode's path), or null
 * @param complete whether the word is finished (a space follows); false for a directory, whose
 *     completion goes on with the names inside it
 */
public record Candidate(String value, String description, boolean complete) {
  public Candidate {
    if (value == null || value.isEmpty()) {
      throw new IllegalArgumentException("a completion candidate needs a value");
    }
  }

  /** A finished word without description. */
  public static Candidate of(String value) {
    return new Candidate(value, null, true);
  }

  /** The name shown in a list: the last part of a path (a directory with its '/'), else all. */
  public String display() {
    String trimmed = value.endsWith("/") ? value.substring(0, value.length() - 1) : value;
    int slash = trimmed.lastIndexOf('/');
    return slash < 0 ? value : value.substring(slash + 1);
  }

  /**
   * This candidate as one line of the node's answer to {@code etcfs shell}: {@code c|p VALUE
   * DESCRIPTION}, c for a finished word and p for one that goes on, both fields URL-encoded, a
   * description of {@code -} for none.
   */
  public String line() {
    return (complete ? "c " : "p ") + encode(value) + " "
        + (description == null ? "-" : encode(description));
  }

  /** The candidate a {@link #line()} describes; empty for any other line. */
  public static Optional<Candidate> parseLine(String line) {
    String[] f = line.split(" ");
    if (f.length != 3 || !(f[0].equals("c") || f[0].equals("p"))) {
      return Optional.empty();
    }
    String value = decode(f[1]);
    if (value.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(new Candidate(value, f[2].equals("-") ? null : decode(f[2]),
        f[0].equals("c")));
  }

  private static String encode(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }

  private static String decode(String s) {
    return URLDecoder.decode(s, StandardCharsets.UTF_8);
  }
}

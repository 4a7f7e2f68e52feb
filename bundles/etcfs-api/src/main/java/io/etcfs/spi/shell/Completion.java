package io.etcfs.spi.shell;

import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * How a Gogo command service says what its words complete to. The service property
 * {@value #PROPERTY} (a string or an array, like {@code osgi.command.function}) holds one entry
 * per function: the function's name, then its words separated by spaces. A word starting with
 * {@code -} is an option; any other is the next operand, given as alternatives separated by
 * {@code |}: a literal word, or {@code @kind} for the candidates of every {@link
 * CompletionSource} of that kind. For example:
 *
 * <pre>
 *   fence @node --yes --json -h
 *   inode @path|@inode --json -h
 *   lock backend|switch --json -h
 * </pre>
 */
public final class Completion {
  /** The service property with a command service's completion entries. */
  public static final String PROPERTY = "etcfs.complete";
  /** The kind of the cluster's member names. */
  public static final String NODE = "node";
  /** The kind of paths: below this node's mountpoint, or from the filesystem's root. */
  public static final String PATH = "path";
  /** The kind of inode numbers (those this node has open or locked, with their paths). */
  public static final String INODE = "inode";

  private Completion() {}

  /**
   * A word of the line {@code etcfs shell} sends to {@code etcfs:_candidates}: {@code w} and its
   * UTF-8 bytes in unpadded base64url, so no word — empty, or with quotes or {@code $} — reaches
   * Gogo's parser as anything but a plain string.
   */
  public static String encodeWord(String word) {
    return "w" + Base64.getUrlEncoder().withoutPadding()
        .encodeToString(word.getBytes(StandardCharsets.UTF_8));
  }

  /**
   * The word {@link #encodeWord} encoded.
   *
   * @throws IllegalArgumentException for anything else, with a one-line message
   */
  public static String decodeWord(String encoded) {
    try {
      if (encoded.startsWith("w")) {
        return new String(Base64.getUrlDecoder().decode(encoded.substring(1)),
            StandardCharsets.UTF_8);
      }
    } catch (IllegalArgumentException e) {
      // not base64url: said below
    }
    throw new IllegalArgumentException("a word not encoded as w<base64url>: " + encoded);
  }
}

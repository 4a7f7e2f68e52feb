package io.etcfs.spi.shell;

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
}

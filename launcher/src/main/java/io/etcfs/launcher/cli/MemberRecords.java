package io.etcfs.launcher.cli;

import java.io.IOException;
import java.io.StringReader;
import java.util.Optional;
import java.util.Properties;

/**
 * Reads the value of a membership key ({@code members/<node>}), which the fencing bundle writes
 * as Properties text ({@code host}, {@code pid}, {@code mountpoint}, {@code joined},
 * {@code leaseTtl}; {@code metrics}, the node's metrics address, when it has one).
 */
final class MemberRecords {
  private MemberRecords() {}

  /** The record's properties, or empty if the text is not Properties text. */
  static Optional<Properties> parse(String value) {
    Properties p = new Properties();
    try {
      p.load(new StringReader(value));
    } catch (IOException | IllegalArgumentException e) {
      // IllegalArgumentException: a malformed Unicode escape in the text
      return Optional.empty();
    }
    return Optional.of(p);
  }
}

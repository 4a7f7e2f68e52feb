package io.etcfs.core.internal;

import java.util.ArrayList;
import java.util.List;

/**
 * A shell command's words: {@code --json} and the operands; anything else starting with
 * {@code -} is refused with the command's usage.
 *
 * @param operands the words that are not options
 * @param json whether {@code --json} was given
 */
record Args(List<String> operands, boolean json) {
  static Args parse(String usage, String[] words, int operandCount) {
    List<String> operands = new ArrayList<>();
    boolean json = false;
    for (String w : words == null ? new String[0] : words) {
      if (w.equals("--json")) {
        json = true;
      } else if (w.startsWith("-")) {
        throw new IllegalArgumentException("unknown option '" + w + "': usage: " + usage);
      } else {
        operands.add(w);
      }
    }
    if (operands.size() != operandCount) {
      throw new IllegalArgumentException("usage: " + usage);
    }
    return new Args(operands, json);
  }

  String operand() {
    return operands.get(0);
  }
}

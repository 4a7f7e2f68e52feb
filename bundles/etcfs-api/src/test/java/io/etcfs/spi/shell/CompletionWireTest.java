package io.etcfs.spi.shell;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Optional;
import org.junit.jupiter.api.Test;

/** What {@code etcfs shell} and the node's shell bundle say to each other on a Tab. */
class CompletionWireTest {
  @Test
  void wordsGoAsPlainCharactersAndComeBackWhateverTheyHeld() {
    assertEquals("w", Completion.encodeWord(""));
    assertEquals("wZmVuY2U", Completion.encodeWord("fence"));
    for (String w : new String[] {"", "/mnt/a b/it's \"x\" $y", "ünï", "fence"}) {
      String encoded = Completion.encodeWord(w);
      assertEquals(true, encoded.matches("w[A-Za-z0-9_-]*"), encoded);
      assertEquals(w, Completion.decodeWord(encoded));
    }
  }

  @Test
  void aWordNotEncodedIsAOneLineError() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Completion.decodeWord("fence"));
    assertEquals("a word not encoded as w<base64url>: fence", e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> Completion.decodeWord("w!!"));
  }

  @Test
  void candidatesGoAsLinesAndComeBack() {
    Candidate dir = new Candidate("/mnt/a b/", null, false);
    Candidate node = new Candidate("node2", "host:2", true);
    assertEquals("p %2Fmnt%2Fa+b%2F -", dir.line());
    assertEquals("c node2 host%3A2", node.line());
    assertEquals(Optional.of(dir), Candidate.parseLine(dir.line()));
    assertEquals(Optional.of(node), Candidate.parseLine(node.line()));
    assertEquals(Optional.empty(), Candidate.parseLine("Command not found: x"));
    assertEquals(Optional.empty(), Candidate.parseLine("c  -"));
  }

  @Test
  void pathsShowTheirLastName() {
    assertEquals("docs/", new Candidate("/mnt/docs/", null, false).display());
    assertEquals("a.txt", Candidate.of("/mnt/docs/a.txt").display());
    assertEquals("node1", Candidate.of("node1").display());
  }
}

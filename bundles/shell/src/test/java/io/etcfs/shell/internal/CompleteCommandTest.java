package io.etcfs.shell.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.etcfs.spi.shell.Candidate;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.junit.jupiter.api.Test;

class CompleteCommandTest {
  private static String w(String word) {
    return "w" + Base64.getUrlEncoder().withoutPadding()
        .encodeToString(word.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void wordsDecodeWhateverTheyHold() {
    assertEquals("", CompleteCommand.decode(w("")));
    assertEquals("/mnt/a b/it's \"x\" $y", CompleteCommand.decode(w("/mnt/a b/it's \"x\" $y")));
    assertEquals("ünï", CompleteCommand.decode(w("ünï")));
  }

  @Test
  void aWordNotEncodedIsAOneLineError() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> CompleteCommand.decode("fence"));
    assertEquals("_candidates: a word not encoded as w<base64url>: fence", e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> CompleteCommand.decode("w!!"));
  }

  @Test
  void pathsShowTheirLastName() {
    assertEquals("docs/", CompleteCommand.display(new Candidate("/mnt/docs/", null, false)));
    assertEquals("a.txt", CompleteCommand.display(Candidate.of("/mnt/docs/a.txt")));
    assertEquals("node1", CompleteCommand.display(Candidate.of("node1")));
  }
}

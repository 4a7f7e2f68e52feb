package io.etcfs.shell.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.etcfs.spi.shell.Candidate;
import io.etcfs.spi.shell.CompletionSource;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class CompleterTest {
  private static final CompletionSource NODES = word -> Stream.of("node1", "node2", "other")
      .filter(n -> n.startsWith(word)).map(n -> new Candidate(n, "host of " + n, true)).toList();
  private static final CompletionSource PATHS = word -> List.of(new Candidate("/mnt/d/", null,
      false));
  private static final CompletionSource BROKEN = word -> {
    throw new IllegalStateException("etcd is away");
  };

  private final Completer completer = new Completer(
      Map.of("fence", CommandSpec.parse("fence @node --yes -h"),
          "inode", CommandSpec.parse("inode @path|@inode --json -h"),
          "lock", CommandSpec.parse("lock backend|switch -h"),
          "members", CommandSpec.parse("members --json -h")),
      kind -> switch (kind) {
        case "node" -> List.of(NODES);
        case "path" -> List.of(PATHS);
        case "inode" -> List.of(BROKEN);
        default -> List.of();
      });

  private List<String> values(String word, String... before) {
    List<String> words = new java.util.ArrayList<>(List.of(before));
    words.add(word);
    return completer.complete(words, words.size() - 1, word).stream().map(Candidate::value)
        .toList();
  }

  @Test
  void operandsFromTheirSources() {
    assertEquals(List.of("node1", "node2"), values("no", "fence"));
    assertEquals(List.of("node1", "node2"), values("no", "etcfs:fence"));
    assertEquals(List.of("node1", "node2", "other"), values("", "fence", "--yes"));
    assertEquals("host of node1",
        completer.complete(List.of("fence", "node1"), 1, "node1").get(0).description());
  }

  @Test
  void literalAlternatives() {
    assertEquals(List.of("backend"), values("b", "lock"));
    assertEquals(List.of("backend", "switch"), values("", "lock"));
  }

  @Test
  void optionsWhenAskedForOrWhenEveryOperandIsGiven() {
    assertEquals(List.of("--yes"), values("--", "fence"));
    assertEquals(List.of("--yes", "-h"), values("", "fence", "node1"));
    assertEquals(List.of("-h"), values("", "fence", "node1", "--yes"));
    assertEquals(List.of("--json", "-h"), values("", "members"));
  }

  @Test
  void aFailingSourceOffersNothingAndTheOthersStillAnswer() {
    assertEquals(List.of("/mnt/d/"), values("", "inode"));
  }

  @Test
  void unknownCommandsAndOtherScopesOfferNothing() {
    assertEquals(List.of(), values("", "lb"));
    assertEquals(List.of(), values("", "felix:fence"));
    assertEquals(List.of(), completer.complete(List.of("fence"), 0, "fence"));
  }

  @Test
  void specsParseAndRefuseEmptyAlternatives() {
    CommandSpec s = CommandSpec.parse("  inode  @path|@inode --json -h ");
    assertEquals("inode", s.function());
    assertEquals(List.of("--json", "-h"), s.options());
    assertEquals(List.of(List.of("@path", "@inode")), s.operands());
    assertThrows(IllegalArgumentException.class, () -> CommandSpec.parse("inode @path||x"));
    assertThrows(IllegalArgumentException.class, () -> CommandSpec.parse("inode @"));
    assertThrows(IllegalArgumentException.class, () -> CommandSpec.parse("   "));
  }
}

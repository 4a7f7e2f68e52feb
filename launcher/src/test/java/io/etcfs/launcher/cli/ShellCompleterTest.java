package io.etcfs.launcher.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.jline.reader.Candidate;
import org.jline.reader.impl.DefaultParser;
import org.junit.jupiter.api.Test;

class ShellCompleterTest {
  /** What the fake node was asked: the words and the index. */
  private final List<String> asked = new ArrayList<>();
  private final ShellCompleter completer = new ShellCompleter(
      () -> List.of("etcfs:members", "etcfs:fence", "etcfs:inode", "etcfs:_candidates",
          "felix:lb", "gogo:grep", "gogo:__files", "gogo:less"),
      (words, index) -> {
        asked.add(words + " @" + index);
        return List.of(new io.etcfs.spi.shell.Candidate("/mnt/docs/", "a dir", false),
            io.etcfs.spi.shell.Candidate.of("node2"));
      });

  private List<Candidate> complete(String line, int cursor) {
    List<Candidate> out = new ArrayList<>();
    completer.complete(null, new DefaultParser().parse(line, cursor), out);
    return out;
  }

  private List<String> values(String line) {
    return complete(line, line.length()).stream().map(Candidate::value).sorted().toList();
  }

  @Test
  void commandNamesWithAndWithoutScopeAndNoHelpers() {
    assertEquals(List.of("etcfs:fence", "etcfs:inode", "etcfs:members", "exit", "felix:lb",
        "fence", "gogo:grep", "grep", "inode", "lb", "members"), values(""));
    assertEquals(values(""), values("lb | "));
    assertEquals(List.of(), asked);
  }

  @Test
  void everyOtherWordIsAskedOfTheNode() {
    assertEquals(List.of("/mnt/docs/", "node2"), values("fence n"));
    assertEquals(List.of("[fence, n] @1"), asked);
    asked.clear();
    values("lb | etcfs:inode --json /mnt/d");
    assertEquals(List.of("[etcfs:inode, --json, /mnt/d] @2"), asked);
  }

  @Test
  void theWordIsCutAtTheCursor() {
    complete("fence node2 --yes", "fence no".length());
    assertEquals(List.of("[fence, no] @1"), asked);
  }

  @Test
  void directoriesStayOpenAndShowTheirLastName() {
    Candidate dir = complete("inode /mnt/d", "inode /mnt/d".length()).get(0);
    assertEquals("/mnt/docs/", dir.value());
    assertEquals("docs/", dir.displ());
    assertEquals("a dir", dir.descr());
    assertEquals(false, dir.complete());
  }

  @Test
  void exitTakesAnOptionalStatus() {
    assertEquals(3, InteractiveShell.exitStatus("exit", 3));
    assertEquals(0, InteractiveShell.exitStatus("exit 0", 3));
    assertEquals(null, InteractiveShell.exitStatus("exitnow", 3));
    assertEquals(null, InteractiveShell.exitStatus("exit now", 3));
  }
}

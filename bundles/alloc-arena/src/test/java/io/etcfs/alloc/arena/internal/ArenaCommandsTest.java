package io.etcfs.alloc.arena.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.alloc.arena.internal.TestFs.Node;
import io.etcfs.spi.alloc.Extent;
import io.etcfs.support.shell.Table;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(20)
class ArenaCommandsTest {
  private final TestFs fs = new TestFs(4, 64);

  @AfterEach
  void close() {
    fs.close();
  }

  @Test
  void listsEveryArenaWithOwnerUseAndLongestFreeRunThenTotals() throws Exception {
    Node n1 = fs.node("n1");
    Node n2 = fs.node("n2");
    List<Extent> a = n1.allocate(10, -1);
    List<Extent> b = n1.allocate(6, -1);
    assertTrue(n1.commit(7, a, List.of()));
    assertTrue(n1.commit(8, b, List.of()));
    // Freeing the first 10 blocks leaves two free runs: 10 blocks, then 48 after the 6 in use.
    assertTrue(n1.commit(7, List.of(), a));
    n2.allocate(1, -1);
    ArenaCommands shell = new ArenaCommands(fs.store, n1.alloc,
        TestFs.config(TestFs.FS, "n1", 60, 0));
    String[] lines = shell.arenas().split("\n");
    assertEquals("ARENA  OWNER  GEN  USED  FREE  LONGEST_FREE  FRAG_PCT", lines[0]);
    assertEquals(8, lines.length, String.join("\n", lines));
    assertEquals(1, rows(lines, "n1  +" + n1.membership.generation()
        + " +6 +58 +48 +17"), String.join("\n", lines));
    // n2's reservation is its own business: n1's mirror shows its arena empty.
    assertEquals(1, rows(lines, "n2  +" + n2.membership.generation()
        + " +0 +64 +64 +0"), String.join("\n", lines));
    assertEquals(2, rows(lines, "-  +- +0 +64 +64 +0"), String.join("\n", lines));
    assertEquals("total: 4 arenas, 2 claimed, blocks of 4096 B", lines[5]);
    assertEquals("       6 blocks used, 250 free of 256", lines[6]);
    for (String line : lines) {
      assertTrue(line.length() <= Table.WIDTH, line);
    }
  }

  /** How many lines are one arena's row ending with the columns {@code tail} matches. */
  private static long rows(String[] lines, String tail) {
    return java.util.Arrays.stream(lines).filter(l -> l.matches(" +\\d  " + tail)).count();
  }

  @Test
  void jsonHasTheSameRowsAndBadInputIsOneLine() throws Exception {
    Node n1 = fs.node("n1");
    n1.allocate(3, -1);
    ArenaCommands shell = new ArenaCommands(fs.store, n1.alloc,
        TestFs.config(TestFs.FS, "n1", 60, 0));
    String json = shell.arenas("--json");
    assertTrue(json.contains("\"owner\": \"n1\", \"gen\": " + n1.membership.generation()
        + ", \"used\": 3, \"free\": 61, \"longest_free\": 61, \"frag_pct\": 0}"), json);
    assertTrue(json.contains("\"owner\": null, \"gen\": null, \"used\": 0, \"free\": 64"),
        json);
    assertEquals(6, json.split("\n").length, json);
    assertEquals("arenas: unknown option --all (usage: arenas [--json])",
        assertThrows(IllegalArgumentException.class, () -> shell.arenas("--all")).getMessage());
    assertTrue(shell.arenas("-h").startsWith("usage: arenas [--json]\n"));
  }
}

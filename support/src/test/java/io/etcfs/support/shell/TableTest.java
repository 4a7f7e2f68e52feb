package io.etcfs.support.shell;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class TableTest {
  @Test
  void alignsNumbersRightAndTextLeft() {
    Table t = new Table().id("NAME").number("GEN").text("MOUNTPOINT");
    t.row("node1", 12, "/mnt/a").row("n2", 1234, null);
    assertEquals("NAME    GEN  MOUNTPOINT\n"
        + "node1    12  /mnt/a\n"
        + "n2     1234  -", t.render());
  }

  @Test
  void freeTextGivesUpWidthFirstAndEveryLineFitsEightyColumns() {
    Table t = new Table().id("NAME").text("MOUNTPOINT").number("TOKEN");
    t.row("node-with-a-long-name", "/very/long/" + "x".repeat(100), 1234567890123L);
    String[] lines = t.render().split("\n");
    for (String l : lines) {
      assertTrue(l.length() <= Table.WIDTH, l.length() + ": " + l);
    }
    assertTrue(lines[1].startsWith("node-with-a-long-name  /very/long/"), lines[1]);
    assertTrue(lines[1].contains("...  1234567890123"), lines[1]);
  }

  @Test
  void jsonKeysAreLowerCaseColumnNamesWithNumbersAndNulls() {
    Table t = new Table().id("NAME").number("GEN").text("NOTE");
    t.row("a\"b", 7, null);
    assertEquals("[\n  {\"name\": \"a\\\"b\", \"gen\": 7, \"note\": null}\n]", t.json());
    assertEquals("[]", new Table().id("X").json());
  }
}

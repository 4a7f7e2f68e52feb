package io.etcfs.support.shell;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class ArgsTest {
  private static final String USAGE = "fence NODE [--yes] [--json]";

  @Test
  void splitsKnownFlagsFromOperandsInAnyOrder() {
    Args a = Args.parse("fence", USAGE, new String[] {"--yes", "node2"}, 1, 1, "--yes", "--json");
    assertTrue(a.has("--yes"));
    assertFalse(a.has("--json"));
    assertFalse(a.help());
    assertEquals(List.of("node2"), a.operands());
  }

  @Test
  void anUnknownOptionIsOneLineNamingTheCommandAndItsUsage() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Args.parse("fence", USAGE, new String[] {"node2", "--force"}, 1, 1, "--yes"));
    assertEquals("fence: unknown option --force (usage: " + USAGE + ")", e.getMessage());
  }

  @Test
  void aWrongNumberOfOperandsIsOneLine() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Args.parse("fence", USAGE, new String[0], 1, 1, "--yes"));
    assertEquals("fence: expected 1 operand, got 0 (usage: " + USAGE + ")", e.getMessage());
    assertFalse(e.getMessage().contains("\n"));
  }

  @Test
  void helpNeedsNoOperandsAndGivesTheUsage() {
    Args a = Args.parse("fence", USAGE, new String[] {"-h"}, 1, 1, "--yes");
    assertTrue(a.help());
    assertEquals("usage: " + USAGE, a.usage());
    assertTrue(Args.parse("members", "members", null, 0, 0).operands().isEmpty());
  }
}

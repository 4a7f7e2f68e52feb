package io.etcfs.launcher.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

/** {@code etcfs --help}: what a new user reads first. */
@Timeout(30)
class HelpTest {

  /** The command list of {@code etcfs --help}: name to summary, wrapped lines joined. */
  private static Map<String, String> summaries() {
    StringWriter out = new StringWriter();
    CommandLine cli = new CommandLine(new Main());
    cli.setOut(new PrintWriter(out));
    assertEquals(0, cli.execute("--help"));
    Map<String, String> m = new LinkedHashMap<>();
    String current = null;
    boolean inCommands = false;
    for (String line : out.toString().lines().toList()) {
      if (line.equals("Commands:")) {
        inCommands = true;
      } else if (inCommands && line.matches("  \\S.*")) {
        String[] f = line.strip().split("\\s+", 2);
        current = f[0];
        m.put(current, f.length > 1 ? f[1] : "");
      } else if (inCommands && current != null && line.matches("\\s{3,}\\S.*")) {
        m.put(current, m.get(current) + " " + line.strip());
      }
    }
    return m;
  }

  @Test
  void everySubcommandIsListed() {
    List<String> expected = new ArrayList<>(new CommandLine(new Main()).getSubcommands().keySet());
    assertEquals(expected, new ArrayList<>(summaries().keySet()));
  }

  @Test
  void everySummaryIsAWholeSentence() {
    summaries().forEach((name, summary) -> {
      assertTrue(summary.endsWith("."), name + ": '" + summary + "' is cut off");
      assertFalse(summary.endsWith(",."), name + ": '" + summary + "'");
      long open = summary.chars().filter(c -> c == '(').count();
      long close = summary.chars().filter(c -> c == ')').count();
      assertEquals(open, close, name + ": unbalanced parentheses in '" + summary + "'");
    });
  }
}

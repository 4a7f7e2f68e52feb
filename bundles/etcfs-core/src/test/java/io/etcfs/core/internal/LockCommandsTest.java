package io.etcfs.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.spi.lock.LockMode;
import io.etcfs.spi.lock.LockReport;
import io.etcfs.spi.lock.LockReport.ClusterLock;
import io.etcfs.spi.lock.LockReport.LockState;
import io.etcfs.spi.shell.InodePaths;
import io.etcfs.support.shell.Table;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The shell's {@code locks}, on a lock report of the test's making (any backend's). */
@Timeout(10)
class LockCommandsTest {
  private static final String LONG_PATH = "/projects/experiment-42/results/run-0001/output.dat";
  private static final Map<Long, String> KNOWN = Map.of(42L, "/dir/file", 43L, LONG_PATH);

  private final Report report = new Report();
  private final LockCommands shell = new LockCommands();

  LockCommandsTest() {
    shell.bindLockReport(report);
    shell.bindInodePaths(ino -> Optional.ofNullable(KNOWN.get(ino)));
  }

  /** A backend's report, as the test sets it. */
  static final class Report implements LockReport {
    final List<LockState> locks = new ArrayList<>();
    List<ClusterLock> cluster = new ArrayList<>();

    @Override
    public String backend() {
      return "test";
    }

    @Override
    public List<LockState> locks() {
      return locks;
    }

    @Override
    public Map<String, String> counters() {
      Map<String, String> c = new LinkedHashMap<>();
      c.put("recalls served by this node", "3");
      return c;
    }

    @Override
    public Optional<List<ClusterLock>> cluster() {
      return Optional.ofNullable(cluster);
    }
  }

  @Test
  void localRowsHaveADecimalInodeRecallsAndThePathWhereKnown() {
    assertTrue(shell.locks().startsWith("no inode locks on this node\n"), shell.locks());
    report.locks.add(new LockState(42, LockMode.EXCLUSIVE, LockReport.State.HELD, false, 7,
        Duration.ofMillis(1500), 0, 3));
    report.locks.add(new LockState(255, LockMode.SHARED, LockReport.State.WAITING, false, 9,
        Duration.ZERO, -1, 0));
    String[] lines = shell.locks().split("\n");
    assertEquals("INODE  MODE  STATE    TOKEN  FOR_S  WAITERS  RECALLS  PATH", lines[0]);
    assertEquals("   42  X     held         7    1.5        0        3  /dir/file", lines[1]);
    assertEquals("  255  S     waiting      9    0.0        -        0  -", lines[2]);
    assertEquals("recalls served by this node: 3", lines[3]);
    assertEquals("TOKEN: fencing token; FOR_S: seconds held or awaited; RECALLS: served here",
        lines[4]);
    assertEquals("[\n  {\"inode\": 42, \"mode\": \"X\", \"state\": \"held\", \"token\": 7, "
        + "\"for_s\": 1.5, \"waiters\": 0, \"recalls\": 3, \"path\": \"/dir/file\"},\n"
        + "  {\"inode\": 255, \"mode\": \"S\", \"state\": \"waiting\", \"token\": 9, "
        + "\"for_s\": 0.0, \"waiters\": null, \"recalls\": 0, \"path\": null}\n]",
        shell.locks("--json"));
  }

  @Test
  void aLongPathShrinksFirstSoEveryLineFits80Columns() {
    report.locks.add(new LockState(43, LockMode.SHARED, LockReport.State.RECALL_PENDING, false,
        123_456_789, Duration.ofHours(1), 12, 1_000));
    String[] lines = shell.locks().split("\n");
    for (String line : lines) {
      assertTrue(line.length() <= Table.WIDTH, line.length() + ": " + line);
    }
    assertTrue(lines[1].matches("   43  S     recalling  123456789  3600.0  +12  +1000  /projects/"
        + "\\S+\\.\\.\\."), lines[1]);
    assertEquals(Table.WIDTH, lines[1].length(), "the path takes what is left, no more");
    assertTrue(shell.locks("--json").contains("\"path\": \"" + LONG_PATH + "\""),
        "JSON is never cut");
  }

  @Test
  void everyRequestInTheClusterWithItsNodeStateAndSession() {
    report.cluster.add(new ClusterLock(42, LockMode.EXCLUSIVE, true, false, "node1", 10, "a1"));
    report.cluster.add(new ClusterLock(42, LockMode.SHARED, false, false, "node2", 11, "b2"));
    report.cluster.add(new ClusterLock(-1, LockMode.SHARED, true, false, "node1", 12, "a1"));
    report.cluster.add(new ClusterLock(43, LockMode.EXCLUSIVE, true, true, "node3", 13, "c3"));
    String[] lines = shell.locks("--all").split("\n");
    assertEquals("               INODE  MODE  STATE   NODE   TOKEN  SESSION  PATH", lines[0]);
    assertEquals("                  42  X     held    node1     10  a1       /dir/file", lines[1]);
    assertEquals("                  42  S     queued  node2     11  b2       /dir/file", lines[2]);
    assertEquals("18446744073709551615  S     held    node1     12  a1       -", lines[3]);
    assertTrue(lines[4].matches("                  43  X     clean   node3     13  c3  +/proj.*"),
        lines[4]);
    String json = shell.locks("--all", "--json");
    assertTrue(json.contains("{\"inode\": 42, \"mode\": \"X\", \"state\": \"held\", "
        + "\"node\": \"node1\", \"token\": 10, \"session\": \"a1\", \"path\": \"/dir/file\"}"),
        json);
    assertTrue(json.contains("{\"inode\": \"18446744073709551615\","), json);
  }

  /**
   * A backend's cluster view may not know other nodes' clean declarations (they are the core's
   * inode fences): a granted exclusive request whose inode's fence names its node clean shows
   * clean; a fence of another node, or a dirty one, does not.
   */
  @Test
  void aHolderWhoseFenceSaysCleanShowsClean() {
    report.cluster.add(new ClusterLock(42, LockMode.EXCLUSIVE, true, false, "node1", 10, "a1"));
    report.cluster.add(new ClusterLock(43, LockMode.EXCLUSIVE, true, false, "node1", 11, "a1"));
    report.cluster.add(new ClusterLock(44, LockMode.EXCLUSIVE, true, false, "node1", 12, "a1"));
    shell.bindFences(ino -> Optional.of(new io.etcfs.spi.fs.InodeFence(
        ino == 43 ? "node2" : "node1", 1, 1, ino != 44)));
    String[] lines = shell.locks("--all").split("\n");
    assertTrue(lines[1].matches(" +42  X +clean .*"), lines[1]);
    assertTrue(lines[2].matches(" +43  X +held .*"), "another node's fence: " + lines[2]);
    assertTrue(lines[3].matches(" +44  X +held .*"), "a dirty fence: " + lines[3]);
  }

  @Test
  void badInputAndABackendThatReportsNothingAreOneLine() {
    assertEquals("locks: unknown option --mine (usage: locks [--all] [--json])",
        assertThrows(IllegalArgumentException.class, () -> shell.locks("--mine")).getMessage());
    assertEquals("locks: expected no operands, got 1 (usage: locks [--all] [--json])",
        assertThrows(IllegalArgumentException.class, () -> shell.locks("17")).getMessage());
    report.cluster = null;
    assertEquals("locks --all: the test lock backend cannot list the cluster's locks",
        assertThrows(IllegalStateException.class, () -> shell.locks("--all")).getMessage());
    shell.unbindLockReport(report);
    assertEquals("locks: no lock backend reports its locks on this node",
        assertThrows(IllegalStateException.class, () -> shell.locks()).getMessage());
  }

  @Test
  void pathsComeFromTheCoreWhileItIsThereAndAFailingLookupIsADash() {
    report.locks.add(new LockState(16, LockMode.EXCLUSIVE, LockReport.State.HELD, false, 1,
        Duration.ZERO, 0, 0));
    report.locks.add(new LockState(17, LockMode.SHARED, LockReport.State.HELD, false, 2,
        Duration.ZERO, 0, 0));
    InodePaths core = ino -> {
      if (ino == 17) {
        throw new IllegalStateException("store down");
      }
      return Optional.of("/dir/file");
    };
    shell.bindInodePaths(core);
    String[] mine = shell.locks().split("\n");
    assertTrue(mine[1].matches(" +16  X .*  /dir/file"), mine[1]);
    assertTrue(mine[2].matches(" +17  S .*  -"), mine[2]);
    shell.unbindInodePaths(ino -> Optional.of("/other"));
    assertTrue(shell.locks().contains("/dir/file"), "only the bound service unbinds");
    shell.unbindInodePaths(core);
    assertTrue(shell.locks().split("\n")[1].matches(" +16  X .*  -"), shell.locks());
  }
}

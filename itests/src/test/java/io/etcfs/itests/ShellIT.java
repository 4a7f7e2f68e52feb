package io.etcfs.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code etcfs shell} as an operator uses it: interactively in a real terminal (tmux) with
 * completion, Ctrl-C and history, then against a node that was killed and left its socket.
 */
@Timeout(600)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ShellIT {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final String PROMPT = "node1$ ";
  @TempDir static Path tmp;
  private static LocalCluster cluster;

  @BeforeAll
  static void up() throws Exception {
    cluster = LocalCluster.up(tmp, 1, "1G");
  }

  @AfterAll
  static void down() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  @Order(1)
  void interactiveShellInATerminal() throws Exception {
    assertTrue(Tmux.installed(), "this test needs tmux (apt-get install tmux)");
    Path mp = cluster.mount(1);
    Files.writeString(mp.resolve("shellit-file.txt"), "x");
    Path history = tmp.resolve("history");
    String cli = Distribution.home().resolve("bin/etcfs").toString();
    String command = "env ETCFS_RUNTIME_DIR='" + cluster.runtime() + "' ETCFS_HISTORY='" + history
        + "' '" + cli + "' shell '" + mp + "'; echo \"[shell exited $?]\"; sleep 600";
    try (Tmux t = Tmux.start(command)) {
      t.await("the prompt", WAIT, s -> Tmux.lastLine(s).equals(PROMPT.strip()));

      t.send("lb", "Enter");
      t.await("the bundle list and a new prompt", WAIT,
          s -> s.contains("Apache Felix Gogo Runtime") && Tmux.lastLine(s).equals(PROMPT.strip()));

      t.send("clear", "Enter");
      t.await("a cleared screen", WAIT, s -> s.strip().equals(PROMPT.strip()));

      t.send("memb", "Tab");
      t.await("'memb' completed to 'members'", WAIT,
          s -> Tmux.lastLine(s).equals(PROMPT + "members"));
      t.send("Enter");
      t.await("the members table", WAIT, s -> s.contains("NAME") && s.contains("\nnode1 ")
          && Tmux.lastLine(s).equals(PROMPT.strip()));

      t.send("clear", "Enter");
      t.await("a cleared screen", WAIT, s -> s.strip().equals(PROMPT.strip()));
      t.send("inode " + mp + "/shellit-f", "Tab");
      t.await("a path completed below the mountpoint", WAIT,
          s -> Tmux.lastLine(s).equals(PROMPT + "inode " + mp + "/shellit-file.txt"));

      // Ctrl-C on a half-typed line clears it: what follows runs alone.
      t.send("C-c");
      t.await("a fresh prompt", WAIT, s -> Tmux.lastLine(s).equals(PROMPT.strip()));
      t.send("etcfs:lock backend", "Enter");
      t.await("the lock backend", WAIT, s -> s.contains(PROMPT + "etcfs:lock backend\netcd\n"));

      // Ctrl-C while a command runs: the shell stops waiting, the node stays well. The key is
      // repeated until it lands while the command is in flight (earlier it only clears a line).
      t.send("clear", "Enter");
      t.await("a cleared screen", WAIT, s -> s.strip().equals(PROMPT.strip()));
      t.send("sleep 120", "Enter");
      long deadline = System.nanoTime() + WAIT.toNanos();
      while (!t.screen().contains("stopped waiting for 'sleep 120'")) {
        assertTrue(System.nanoTime() < deadline, "Ctrl-C did not stop the wait:\n" + t.screen());
        t.send("C-c");
        Thread.sleep(300);
      }
      t.send("C-u", "etcfs:alloc backend", "Enter");
      t.await("the node still answering", WAIT, s -> s.contains("\narena\n"));

      t.send("exit", "Enter");
      t.await("the shell's exit", WAIT, s -> s.contains("[shell exited 0]"));
    }
    List<String> lines = Files.readAllLines(history);
    assertTrue(lines.stream().anyMatch(l -> l.equals("lb") || l.endsWith(":lb")), "history: " + lines);
    String log = Files.readString(cluster.dir().resolve("log/node1.log"));
    assertFalse(log.contains("\tat io.etcfs.launcher"), "a stack trace in the node log:\n" + log);
    assertFalse(log.contains("io.etcfs.launcher.control.ControlServer"), log);
  }

  @Test
  @Order(2)
  void badInputIsOneLineAndADeadNodesSocketToo() throws Exception {
    Path mp = cluster.mount(1);
    Distribution.Result unknown = cluster.etcfs("shell", mp.toString(), "-c", "nosuchcommand");
    assertEquals(1, unknown.exit(), unknown.toString());
    assertEquals("etcfs: Command not found: nosuchcommand\n", unknown.out(), unknown.toString());
    assertEquals("", unknown.err(), unknown.toString());

    Distribution.Result nobody = cluster.etcfs("shell", tmp.toString(), "-c", "lb");
    assertEquals(1, nobody.exit(), nobody.toString());
    assertEquals(1, nobody.errLines().size(), nobody.toString());

    Path sock = cluster.dir().resolve("run/node1.sock");
    long pid = Processes.pid(cluster.dir().resolve("run/node1.pid")).orElseThrow();
    ProcessHandle.of(pid).orElseThrow().destroyForcibly();
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (Processes.alive(pid)) {
      assertTrue(System.nanoTime() < deadline, "node1 survived SIGKILL");
      Thread.sleep(100);
    }
    assertTrue(Files.exists(sock), "the dead node's socket file should be left behind");
    Distribution.Result dead = cluster.etcfs("shell", mp.toString(), "-c", "lb");
    assertEquals(1, dead.exit(), dead.toString());
    assertEquals(List.of("etcfs: node node1 at " + sock + " is not running (connection refused)"),
        dead.errLines(), dead.toString());
  }
}

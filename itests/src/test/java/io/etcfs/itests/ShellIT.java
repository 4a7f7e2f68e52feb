package io.etcfs.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
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

      // Words after the command come from the node: node names, options, literal actions.
      t.send("C-u", "fence ", "Tab");
      t.await("the node name completed", WAIT,
          s -> Tmux.lastLine(s).equals(PROMPT + "fence node1"));
      t.send("--y", "Tab");
      t.await("the option completed", WAIT,
          s -> Tmux.lastLine(s).equals(PROMPT + "fence node1 --yes"));
      t.send("C-u", "lock b", "Tab");
      t.await("the action completed", WAIT,
          s -> Tmux.lastLine(s).equals(PROMPT + "lock backend"));

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

  /**
   * {@code etcfs mount --foreground} on a terminal gives the node's own Gogo shell (gogo.jline),
   * and the etcfs commands' words complete there as in {@code etcfs shell}.
   */
  @Test
  @Order(2)
  void theForegroundNodesOwnShellCompletesTheSameWords() throws Exception {
    Path mp1 = cluster.mount(1);
    Files.writeString(mp1.resolve("fg-file.txt"), "x");
    Path mp2 = Files.createDirectories(cluster.dir().resolve("mnt/node2"));
    Map<String, String> env = clusterEnv();
    String cli = Distribution.home().resolve("bin/etcfs").toString();
    String command = "env ETCFS_RUNTIME_DIR='" + cluster.runtime() + "' '" + cli + "' mount '"
        + env.get("ETCFS_DEVICE") + "' '" + mp2 + "' --etcd '" + env.get("ETCFS_ETCD")
        + "' --node node2 --state-dir '" + cluster.dir().resolve("run/node2-fg")
        + "' --foreground; echo \"[node exited $?]\"; sleep 600";
    try (Tmux t = Tmux.start(command)) {
      // The node logs its start on this terminal, over gogo's first prompt, READY last (after
      // the mount answers): wait for that line, then ask for a fresh prompt.
      t.await("node2's READY line", Duration.ofSeconds(120),
          sc -> sc.replace("\n", "").contains("node2 READY"));
      assertTrue(Files.readString(Path.of("/proc/self/mountinfo")).contains(" " + mp2 + " "),
          "READY before the mount");
      freshPrompt(t);

      t.send("fence ", "Tab");
      t.await("both node names offered", WAIT, s -> s.contains("g! fence node")
          && s.lines().anyMatch(l -> l.matches("node1 \\(.*\\)\\s+node2 \\(.*\\)\\s*")));
      t.send("C-u", "inode " + mp2 + "/fg-f", "Tab");
      t.await("a path completed below the mountpoint", WAIT,
          s -> Tmux.lastLine(s).startsWith("g! inode " + mp2 + "/fg-file.txt "));
      t.send("Enter");
      t.await("the inode's attributes", WAIT, s -> s.contains("type    regular file"));

      t.send("exit 0", "Enter");
      t.await("the node's exit", Duration.ofSeconds(120), s -> s.contains("[node exited 0]"));
    }
  }

  /**
   * Enter until gogo's prompt is the last line: a log line the node prints just after one
   * prompt (a busy machine delays them) covers it, and Enter draws another.
   */
  private static void freshPrompt(Tmux t) throws Exception {
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (true) {
      t.send("Enter");
      try {
        t.await("gogo's prompt", Duration.ofSeconds(5), s -> Tmux.lastLine(s).startsWith("g!"));
        return;
      } catch (AssertionError e) {
        if (System.nanoTime() > deadline) {
          throw e;
        }
      }
    }
  }

  /** The cluster's {@code cluster.env}: KEY='value' lines. */
  private static Map<String, String> clusterEnv() throws Exception {
    Map<String, String> env = new java.util.HashMap<>();
    for (String line : Files.readAllLines(cluster.dir().resolve("cluster.env"))) {
      int eq = line.indexOf('=');
      if (eq > 0) {
        env.put(line.substring(0, eq), line.substring(eq + 1).replaceAll("^'|'$", ""));
      }
    }
    return env;
  }

  @Test
  @Order(3)
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

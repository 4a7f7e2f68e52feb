package io.etcfs.itests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cluster commands of the node shell (issue #6) through {@code etcfs shell MP -c}, on a
 * 2-node {@code etcfs up} cluster: each command's table or JSON, and bad input answered on one
 * line with a non-zero exit.
 */
@Timeout(300)
class ShellCommandsIT {
  private static final Duration RECOVERY = Duration.ofSeconds(90);

  @TempDir Path tmp;
  LocalCluster cluster;

  @AfterEach
  void down() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void membersArenasLocksFenceAndFenced() throws Exception {
    cluster = LocalCluster.up(tmp.resolve("c"), 2, "1G");
    String etcd = Faults.env(cluster.dir()).get("ETCFS_ETCD");
    long generation2 = Faults.generation(etcd, "etcfs", "node2");

    Distribution.Result members = shell("members");
    assertEquals(0, members.exit(), members.toString());
    String[] lines = members.out().split("\n");
    assertTrue(lines[0].startsWith("NAME   GEN  SLOT  HOST"), members.toString());
    assertTrue(members.out().matches("(?s).*\nnode1 .* live\n.*"), members.toString());
    assertTrue(members.out().matches("(?s).*\nnode2 +" + generation2 + " .* live\n.*"),
        members.toString());
    fits(members);

    Distribution.Result json = shell("members --json");
    assertEquals(0, json.exit(), json.toString());
    assertTrue(json.out().startsWith("[\n  {\"name\": \"node1\""), json.toString());
    assertTrue(json.out().contains("{\"name\": \"node2\", \"gen\": " + generation2 + ","),
        json.toString());

    Distribution.Result leases = shell("leases");
    assertEquals(0, leases.exit(), leases.toString());
    fits(leases);
    assertTrue(leases.out().matches("(?s)LEASE +ID +TTL_S .*\nmembership +[0-9a-f]+ +10 .* live\n.*"),
        leases.toString());

    // Kept open: a lock declared clean at a close is made shared once unused for a second.
    FileChannel written = FileChannel.open(cluster.mount(1).resolve("f"),
        StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    written.write(ByteBuffer.wrap(new byte[1 << 20]));
    written.force(true);
    Distribution.Result arenas = shell("arenas");
    assertEquals(0, arenas.exit(), arenas.toString());
    fits(arenas);
    assertTrue(arenas.out().startsWith("ARENA  OWNER  GEN  USED"), arenas.toString());
    assertTrue(arenas.out().matches("(?s).*\n +\\d+  node1 +\\d+ +\\d+ .*"), arenas.toString());
    assertTrue(arenas.out().contains("\ntotal: "), arenas.toString());

    // The writer holds the file's inode lock while it writes (fsync declares nothing clean).
    Distribution.Result locks = shell("locks --all");
    assertEquals(0, locks.exit(), locks.toString());
    fits(locks);
    assertTrue(locks.out().matches("(?s) *INODE  MODE  STATE +NODE .*\n *[0-9]+  X +held +node1 .*"),
        locks.toString());

    // The lock session that holds it shows in leases beside the membership.
    Distribution.Result withSession = shell("leases");
    assertEquals(0, withSession.exit(), withSession.toString());
    fits(withSession);
    assertTrue(withSession.out().matches("(?s).*\nlock session +[0-9a-f]+ +2 .* live\n.*"),
        withSession.toString());
    written.close();

    Distribution.Result help = shell("help locks");
    assertEquals(0, help.exit(), help.toString());
    assertTrue(help.out().contains("inode locks held or awaited here"), help.toString());

    Distribution.Result unknown = shell("fence nosuch --yes");
    assertEquals(1, unknown.exit(), unknown.toString());
    assertEquals("etcfs: fence: no live member named nosuch in etcfs (see: members)\n",
        unknown.out(), unknown.toString());
    Distribution.Result badOption = shell("members --bogus");
    assertEquals(1, badOption.exit(), badOption.toString());
    assertEquals(1, badOption.out().strip().lines().count(), badOption.toString());

    Distribution.Result ask = shell("fence node2");
    assertEquals(1, ask.exit(), ask.toString());
    assertTrue(ask.out().contains("would revoke the membership lease")
        && ask.out().contains("to do it: fence node2 --yes"), ask.toString());
    assertEquals(generation2, Faults.generation(etcd, "etcfs", "node2"), "node2 not fenced");

    // Confirmed, the fence expels node2 for real: its lease is revoked, it fences itself (its
    // mount answers EIO) and node1 recovers it.
    Distribution.Result yes = shell("fence node2 --yes");
    assertEquals(0, yes.exit(), yes.toString());
    Faults.await("node2 fences itself after 'fence node2 --yes'", RECOVERY, () -> {
      try {
        Files.write(cluster.mount(2).resolve("after-fence"), new byte[1]);
        return false;
      } catch (java.io.IOException e) {
        return e.getMessage() != null && e.getMessage().contains("Input/output error");
      }
    });
    Faults.awaitRecovered(etcd, "etcfs", "node2", generation2, RECOVERY);
    Distribution.Result fenced = shell("fenced");
    assertEquals(0, fenced.exit(), fenced.toString());
    fits(fenced);
    assertTrue(fenced.out().matches("(?s)NODE +GEN  BY .*\nnode2 +" + generation2
        + "  node1 +\\S+  done .*"), fenced.toString());
  }

  /**
   * The lock table names a lock's inode in decimal with its path, and counts the recalls this
   * node served for it: node2 reading node1's fresh file takes node1's exclusive lock back.
   */
  @Test
  void locksShowThePathAndTheRecallsServedPerInode() throws Exception {
    cluster = LocalCluster.up(tmp.resolve("c"), 2, "1G");
    Path file = cluster.mount(1).resolve("dir").resolve("file");
    Files.createDirectory(file.getParent());
    // Written and kept open while the lock is looked at (a clean lock of a closed file is
    // made shared once unused for a second), under the name it was created with.
    FileChannel written = FileChannel.open(file, StandardOpenOption.CREATE_NEW,
        StandardOpenOption.WRITE);
    written.write(ByteBuffer.wrap(new byte[] {1, 2, 3}));
    written.force(true);
    long ino = (Long) Files.getAttribute(file, "unix:ino");

    Distribution.Result mine = shell("locks");
    assertEquals(0, mine.exit(), mine.toString());
    fits(mine);
    assertTrue(mine.out().matches("(?s).*\n *" + ino + "  X +held [^\n]*  /dir/file\n.*"),
        mine.toString());
    Distribution.Result all = shell("locks --all");
    assertEquals(0, all.exit(), all.toString());
    fits(all);
    assertTrue(all.out().matches("(?s).*\n *" + ino + "  X +held +node1 [^\n]*  /dir/file(\n.*)?"),
        all.toString());
    written.close();

    // node2's append recalls node1's lock (a read alone may find it shared, and recall
    // nothing); node1 counts it against the inode, and shows it on its row once it holds that
    // inode's lock again (its next read takes a shared lock).
    Path there = cluster.mount(2).resolve("dir").resolve("file");
    assertArrayEquals(new byte[] {1, 2, 3}, Files.readAllBytes(there));
    Files.write(there, new byte[] {4}, StandardOpenOption.APPEND);
    Pattern row = Pattern.compile("\\{\"inode\": " + ino + ", [^}]*\"recalls\": ([0-9]+), "
        + "\"path\": \"/dir/file\"}");
    Faults.await("node1's locks --json shows a recall of inode " + ino, Duration.ofSeconds(30),
        () -> {
          Files.readAllBytes(file);
          Distribution.Result json = shell("locks --json");
          Matcher m = row.matcher(json.out());
          return json.exit() == 0 && m.find() && Long.parseLong(m.group(1)) >= 1;
        });
    Distribution.Result after = shell("locks");
    fits(after);
    assertTrue(after.out().matches("(?s).*\n *" + ino + "  S +held [^\n]* [1-9][0-9]*  /dir/file\n"
        + "(.*\n)?recalls served by this node: [1-9][0-9]*\n.*"), after.toString());
  }

  private static void fits(Distribution.Result r) {
    r.out().lines().forEach(l -> assertTrue(l.length() <= 80, l.length() + ": " + l));
  }

  /** Runs one command on node1; its output also goes to the test's log, for a failed run. */
  private Distribution.Result shell(String command) throws Exception {
    Distribution.Result r = cluster.etcfs("shell", cluster.mount(1).toString(), "-c", command);
    System.out.println("$ etcfs shell MP -c '" + command + "'  (exit " + r.exit() + ")\n"
        + r.out());
    return r;
  }
}

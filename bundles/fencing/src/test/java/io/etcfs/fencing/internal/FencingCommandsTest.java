package io.etcfs.fencing.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.Txn;
import io.etcfs.support.shell.Table;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The fencing bundle's shell commands against the in-memory store and an image file. */
@Timeout(20)
class FencingCommandsTest {
  private final FaultyMetaStore store = new FaultyMetaStore();
  @TempDir Path dir;
  private Path device;
  private NodeMembership n1;
  private NodeMembership n2;
  private FencingCommands shell;

  @BeforeEach
  void join() throws IOException {
    device = NodeMembershipTest.image(dir);
    n1 = new NodeMembership(store, new NoneFenceAgent(),
        NodeMembershipTest.config("fs1", "n1", 10, device));
    n2 = new NodeMembership(store, new NoneFenceAgent(),
        NodeMembershipTest.config("fs1", "n2", 10, device));
    shell = new FencingCommands(store, n1, NodeMembershipTest.config("fs1", "n1", 10, device));
  }

  @AfterEach
  void leave() {
    for (NodeMembership m : new NodeMembership[] {n1, n2}) {
      if (!m.isFenced()) {
        m.leave();
      }
    }
    store.close();
  }

  @Test
  void membersShowsEveryLiveNodeWithItsLeaseAndHeartbeat() {
    String[] lines = shell.members().split("\n");
    assertEquals("NAME  GEN  SLOT  HOST    MOUNTPOINT   LEASE_S  BEAT_S  STATE", lines[0]);
    assertTrue(lines[1].matches("n1 +" + n1.generation() + " +0  host-a  /mnt/etc fs +(9|10) +"
        + "\\d\\.\\d  live"), lines[1]);
    assertTrue(lines[2].matches("n2 +" + n2.generation() + " +1  host-a  /mnt/etc fs +(9|10) +"
        + "\\d\\.\\d  live"), lines[2]);
    assertTrue(lines[3].startsWith("LEASE_S: "), lines[3]);
    for (String line : lines) {
      assertTrue(line.length() <= Table.WIDTH, line);
    }
  }

  @Test
  void membersAsJsonHasTheSameRows() {
    String json = shell.members("--json");
    assertTrue(json.startsWith("[\n  {\"name\": \"n1\", \"gen\": " + n1.generation()
        + ", \"slot\": 0, \"host\": \"host-a\", \"mountpoint\": \"/mnt/etc fs\", \"lease_s\": "),
        json);
    assertTrue(json.contains("\"state\": \"live\"}"), json);
    assertEquals(4, json.split("\n").length, json);
  }

  @Test
  void aCrashedNodeStaysListedByItsSlotUntilRecovered() {
    n2.crash();
    store.expireLease(n2.lease());
    String table = shell.members();
    assertTrue(table.matches("(?s).*\nn2 +" + n2.generation() + " +1 +- +- +- +\\d+\\.\\d  dead, "
        + "recovery pending\n.*"), table);
  }

  @Test
  void fenceWithoutYesSaysWhatItWouldDoAndFails() {
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> shell.fence("n2"));
    assertEquals("fence: would revoke the membership lease " + Long.toHexString(n2.lease())
        + " of n2 (generation " + n2.generation() + "): it fences itself and a survivor recovers "
        + "it; to do it: fence n2 --yes", e.getMessage());
    assertFalse(n2.isFenced());
  }

  @Test
  void fenceWithYesRevokesTheLeaseAndTheNodeFencesItself() throws Exception {
    String said = shell.fence("n2", "--yes");
    assertTrue(said.startsWith("fence: revoked the membership lease "), said);
    assertFalse(store.get(Keys.of("/etcfs/fs1/members/n2")).isPresent());
    n2.done().toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertTrue(n2.isFenced());
  }

  @Test
  void badFenceInputIsOneLine() {
    assertEquals("fence: no live member named nosuch in fs1 (see: members)",
        assertThrows(IllegalArgumentException.class, () -> shell.fence("nosuch", "--yes"))
            .getMessage());
    assertEquals("fence: n1 is this node; to take it out, unmount it (etcfs umount)",
        assertThrows(IllegalArgumentException.class, () -> shell.fence("n1", "--yes"))
            .getMessage());
    assertEquals("fence: unknown option --force (usage: fence NODE [--yes])",
        assertThrows(IllegalArgumentException.class, () -> shell.fence("n2", "--force"))
            .getMessage());
    assertEquals("fence: expected 1 operand, got 0 (usage: fence NODE [--yes])",
        assertThrows(IllegalArgumentException.class, () -> shell.fence()).getMessage());
    assertTrue(shell.fence("-h").startsWith("usage: fence NODE [--yes]\n"));
  }

  @Test
  void fencedListsTheRecoveryRecords() {
    assertEquals("no fences recorded in fs1", shell.fenced());
    store.commit(new Txn().then(Op.put(Keys.of("/etcfs/fs1/fences/n9/000000000000002a"),
        Keys.of("node=n9\ngeneration=42\nslot=3\nrecoveredBy=n1\nstarted=2026-11-30T09:00:01"
            + ".123Z\nagent=none\nresult=done\nseconds=3.4 s\n"))));
    assertEquals("NODE  GEN  BY  WHEN                  RESULT  SECONDS\n"
        + "n9     42  n1  2026-11-30T09:00:01Z  done        3.4", shell.fenced());
    assertEquals("[\n  {\"node\": \"n9\", \"gen\": 42, \"by\": \"n1\", \"when\": "
        + "\"2026-11-30T09:00:01Z\", \"result\": \"done\", \"seconds\": 3.4}\n]",
        shell.fenced("--json"));
  }

  @Test
  void aLongFailureIsCutToEightyColumns() {
    String reason = "failed: fence agent exec: command exited 1: " + "x".repeat(120);
    store.commit(new Txn().then(Op.put(Keys.of("/etcfs/fs1/fences/n9/000000000000002a"),
        Keys.of("node=n9\ngeneration=42\nrecoveredBy=n1\nstarted=2026-11-30T09:00:01Z\nresult="
            + reason + "\nattempts=1\n"))));
    String[] lines = shell.fenced().split("\n");
    assertTrue(lines[1].matches("n9 +42  n1  2026-11-30T09:00:01Z  failed: fence agent exec.*\\.\\.\\."
        + " +-"), lines[1]);
    for (String line : lines) {
      assertTrue(line.length() <= Table.WIDTH, line.length() + ": " + line);
    }
    assertTrue(shell.fenced("--json").contains(reason), "JSON keeps the whole result");
  }

  @Test
  void leasesShowsThisNodesMembershipLease() {
    String[] lines = shell.leases().split("\n");
    assertEquals(List.of("LEASE", "ID", "TTL_S", "LEFT_S", "ETCD_S", "LAST_ACK", "STATE"),
        List.of(lines[0].split(" +")));
    assertTrue(lines[1].startsWith("membership  " + Long.toHexString(n1.lease())), lines[1]);
    assertTrue(lines[1].endsWith("live"), lines[1]);
    assertTrue(lines[2].startsWith("LEFT_S: by this node's own deadline;"), lines[2]);
    for (String line : lines) {
      assertTrue(line.length() <= Table.WIDTH, line);
    }
    assertTrue(shell.leases("--json").contains("\"ttl_s\": 10"), shell.leases("--json"));
  }
}

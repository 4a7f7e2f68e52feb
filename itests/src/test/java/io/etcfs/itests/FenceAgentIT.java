package io.etcfs.itests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Recovery of a SIGKILLed node with the {@code exec} fence agent, on real node processes: the
 * survivor runs the configured command with the dead node's name and generation, and only then
 * takes back its arenas and orphans; a command that hangs is cut off at {@code --fence-timeout},
 * recorded as a failed recovery, and the dead node's arenas stay claimed (issue #5, fence agents
 * and bad input).
 */
@Timeout(240)
class FenceAgentIT {
  private static final Duration RECOVERY = Duration.ofSeconds(90);

  @TempDir Path tmp;
  LocalCluster cluster;
  Process holder;

  @AfterEach
  void down() throws Exception {
    if (holder != null) {
      holder.destroyForcibly();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void theFenceCommandRunsBeforeTheDeadNodesSpaceIsTakenBack() throws Exception {
    Path calls = tmp.resolve("fence-calls.txt");
    cluster = LocalCluster.up(tmp.resolve("c"), 2, "2G", Map.of(), "--fence-agent", "exec",
        "--fence-command", "echo \"$ETCFS_FENCE_ACTION $ETCFS_FENCE_NODE "
            + "$ETCFS_FENCE_GENERATION $ETCFS_FENCE_FS\" >> " + calls);
    String etcd = Faults.env(cluster.dir()).get("ETCFS_ETCD");
    long generation = Faults.generation(etcd, "etcfs", "node2");
    byte[] data = new byte[3 << 20];
    new Random(5).nextBytes(data);
    Path kept = cluster.mount(2).resolve("kept");
    Files.write(kept, data); // closed: committed
    // An orphan: unlinked while a process on node2 keeps it open.
    Path orphan = cluster.mount(2).resolve("orphan");
    Files.write(orphan, data);
    holder = new ProcessBuilder("sh", "-c", "exec 3<'" + orphan + "'; rm '" + orphan
        + "'; echo held; exec sleep 600").start();
    assertEquals("held", new String(holder.getInputStream().readNBytes(4)));
    Faults.await("node2's orphan recorded", Duration.ofSeconds(10),
        () -> !Faults.etcdctl(etcd, "get", "--prefix", "--keys-only", "/etcfs/etcfs/orphans/")
            .isBlank());
    assertTrue(claims(etcd).contains("generation=" + generation), claims(etcd));

    Faults.signal(Faults.nodePid(cluster, 2), "KILL");
    Faults.awaitRecovered(etcd, "etcfs", "node2", generation, RECOVERY);

    assertEquals("fence node2 " + generation + " etcfs", Files.readString(calls).strip(),
        "the agent ran once, with the dead incarnation");
    String record = Faults.fenceRecord(etcd, "etcfs", "node2", generation);
    assertTrue(record.contains("agentResult=exec ok"), record);
    assertTrue(record.contains("recoveredBy=node1"), record);
    assertFalse(claims(etcd).contains("generation=" + generation),
        "the dead node's arenas are released: " + claims(etcd));
    assertTrue(Faults.etcdctl(etcd, "get", "--prefix", "--keys-only", "/etcfs/etcfs/orphans/")
        .isBlank(), "its orphan is purged");
    assertTrue(Faults.etcdctl(etcd, "get", "--prefix", "--keys-only", "/etcfs/etcfs/slots/")
        .strip().lines().count() == 1, "only node1's heartbeat slot is left");
    assertArrayEquals(data, Files.readAllBytes(cluster.mount(1).resolve("kept")),
        "what the dead node committed is intact");
  }

  @Test
  void aHangingFenceCommandIsCutOffAndTheFailureRecorded() throws Exception {
    cluster = LocalCluster.up(tmp.resolve("c"), 2, "2G", Map.of(), "--fence-agent", "exec",
        "--fence-command", "sleep 600", "--fence-timeout", "2s");
    String etcd = Faults.env(cluster.dir()).get("ETCFS_ETCD");
    long generation = Faults.generation(etcd, "etcfs", "node2");
    Files.write(cluster.mount(2).resolve("f"), new byte[1 << 20]);
    assertTrue(claims(etcd).contains("generation=" + generation), claims(etcd));

    Faults.signal(Faults.nodePid(cluster, 2), "KILL");
    Faults.await("a failed recovery recorded", RECOVERY,
        () -> Faults.fenceRecord(etcd, "etcfs", "node2", generation).contains("result=failed"));

    String record = Faults.fenceRecord(etcd, "etcfs", "node2", generation);
    assertTrue(record.contains("timed out after 2 s"), record);
    assertTrue(claims(etcd).contains("generation=" + generation),
        "arenas stay claimed while the node is not known to be fenced: " + claims(etcd));
    Files.write(cluster.mount(1).resolve("still-working"), new byte[1 << 20]);
    assertEquals(1 << 20, Files.size(cluster.mount(1).resolve("still-working")),
        "the survivor keeps working meanwhile");
  }

  private static String claims(String etcd) throws Exception {
    return Faults.etcdctl(etcd, "get", "--prefix", "/etcfs/etcfs/arenas/");
  }
}

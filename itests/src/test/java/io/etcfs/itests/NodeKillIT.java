package io.etcfs.itests;

import static io.etcfs.itests.Faults.RECORD;
import static io.etcfs.itests.Faults.ms;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The reference fault (issue #5): a node SIGKILLed under load. node3 (the victim) and node1 both
 * write one shared file, each its own region; node3 also writes, with fsync, a file only it
 * writes. At the kill, node2 starts writing node3's own file (the takeover probe). Times are
 * taken from a death watch on node3's pid, and the survivors are watched on past the expiry of
 * node3's membership lease, so a stall in recovery would show too.
 */
@Timeout(240)
class NodeKillIT {
  static final long SHARED_SLOTS = 256; // 16 MiB region each, rewritten in a loop
  static final long OWN_SLOTS = 16384; // 1 GiB: the victim never wraps within the test

  @TempDir Path tmp;
  LocalCluster cluster;
  final List<ProbeProcess> probes = new ArrayList<>();

  @AfterEach
  void down() throws Exception {
    for (ProbeProcess p : probes) {
      p.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void aKilledNodesFilesAreTakenOverAndSurvivorsNeverStop() throws Exception {
    cluster = LocalCluster.up(tmp.resolve("c"), 3, "4G");
    Path n1 = cluster.mount(1);
    Path n2 = cluster.mount(2);
    Path n3 = cluster.mount(3);
    String etcd = Faults.env(cluster.dir()).get("ETCFS_ETCD");
    long generation = Faults.generation(etcd, "etcfs", "node3");
    ProbeProcess shared1 = probe("shared-node1", n1.resolve("shared"), 1, 0, SHARED_SLOTS, false);
    ProbeProcess shared3 = probe("shared-node3", n3.resolve("shared"), 3,
        SHARED_SLOTS * RECORD, SHARED_SLOTS, false);
    ProbeProcess own3 = probe("own-node3", n3.resolve("victim"), 30, 0, OWN_SLOTS, true);
    long since = Probe.nowMicros();
    shared1.awaitRecords(20, since, 60_000);
    shared3.awaitRecords(20, since, 60_000);
    own3.awaitRecords(20, since, 60_000);

    long pid = Faults.nodePid(cluster, 3);
    DeathWatch watch = DeathWatch.start(pid);
    long kill = Probe.nowMicros();
    Faults.signal(pid, "KILL");
    ProbeProcess takeover = probe("takeover-node2", n2.resolve("victim"), 20,
        OWN_SLOTS * RECORD, 4096, false);
    long death = watch.awaitDeath(30_000);
    assertTrue(death > 0, "node3 (pid " + pid + ") still alive 30 s after SIGKILL");
    shared3.kill(); // writing into a dead mount now; their logs up to the death are what counts
    own3.kill();
    takeover.awaitRecords(1, kill, 30_000);
    // Watch the survivors past the membership lease (10 s) and node3's recovery (lease + 5 s
    // grace): recovery must not stop them either.
    Faults.await("node3's membership key expires", Duration.ofSeconds(30),
        () -> Faults.generation(etcd, "etcfs", "node3") < 0);
    long gone = Probe.nowMicros();
    long recovered = Faults.awaitRecovered(etcd, "etcfs", "node3", generation,
        Duration.ofSeconds(60));
    shared1.awaitRecords(20, recovered, 30_000);
    takeover.awaitRecords(20, recovered, 30_000);
    long end = Probe.nowMicros();
    assertTrue(shared1.stop(30_000), "the survivor's shared probe was stuck at the end");
    assertTrue(takeover.stop(30_000), "the takeover probe was stuck at the end");

    ProbeLog s1 = shared1.log();
    ProbeLog tk = takeover.log();
    ProbeLog o3 = own3.log();
    long firstTakeover = tk.firstDoneAfter(kill);
    long stall = s1.worstStallMicros(kill, end);
    System.out.printf("NodeKillIT: victim down %s after SIGKILL; takeover of its file %s after"
            + " the kill (%s after death); survivor's worst stall on the shared file %s;"
            + " membership lease gone %s and recovery recorded %s after death;"
            + " failed ops after death: shared %d,"
            + " takeover %d; still writing at end: shared %s, takeover %s; victim fsynced %d"
            + " records%n",
        ms(death - kill), ms(firstTakeover - kill), ms(firstTakeover - death), ms(stall),
        ms(gone - death), ms(recovered - death), s1.errorsAfter(death).size(), tk.errors.size(),
        s1.writingAt(end, 1_000_000), tk.writingAt(end, 1_000_000),
        o3.fsyncedBefore(death).size());

    assertTrue(firstTakeover - kill < 8_000_000, "takeover took " + ms(firstTakeover - kill)
        + ": the lock session (2 s) did not free node3's file before its membership (10 s)");
    assertEquals(List.of(), s1.errors, "the survivor's shared probe failed");
    assertEquals(List.of(), tk.errors, "the takeover probe failed");
    assertTrue(stall < 8_000_000, "the survivor stalled " + ms(stall) + " on the shared file");
    assertTrue(s1.writingAt(end, 2_000_000) && tk.writingAt(end, 2_000_000),
        "a survivor probe was silent at the end");
    assertTrue(o3.maxSeq() < OWN_SLOTS, "the victim wrapped its region");
    List<Long> fsynced = o3.fsyncedBefore(death);
    assertTrue(fsynced.size() >= 20, "the victim fsynced only " + fsynced.size() + " records");
    assertEquals(List.of(), ProbeLog.verify(n1.resolve("victim"), 30, RECORD, 0, OWN_SLOTS,
        fsynced), "records node3 had fsynced, read on node1");
    assertEquals(List.of(), ProbeLog.verify(n1.resolve("shared"), 1, RECORD, 0, SHARED_SLOTS,
        s1.latestPerSlot(SHARED_SLOTS).values()), "node1's own records in the shared file");
    assertEquals(List.of(), ProbeLog.verify(n1.resolve("victim"), 20, RECORD,
        OWN_SLOTS * RECORD, 4096, tk.latestPerSlot(4096).values()),
        "node2's takeover records, read on node1");
  }

  private ProbeProcess probe(String name, Path file, int id, long offset, long slots,
      boolean fsync) throws Exception {
    ProbeProcess p = ProbeProcess.start(name, tmp, file, id, RECORD, offset, slots, fsync);
    probes.add(p);
    return p;
  }
}

package io.etcfs.itests;

import static io.etcfs.itests.Faults.RECORD;
import static io.etcfs.itests.Faults.ms;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * etcd stopped (SIGSTOP: it answers nothing, connections stay open, as a hung or partitioned
 * etcd) under three writing nodes (issue #5). Shorter than the 2 s lock session: the writers
 * stall and go on, nothing lost. Longer than the 10 s membership lease: every node fences itself
 * (EIO), and once etcd is back each remounts as a new generation with every record fsynced
 * before the outage intact.
 */
@Timeout(300)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class EtcdOutageIT {
  static final long SHARED_SLOTS = 256;
  static final long OWN_SLOTS = 16384;

  @TempDir static Path tmp;
  static LocalCluster cluster;
  static String etcd;
  static long etcdPid;
  static final List<Long> fsyncedBeforeLongOutage = new ArrayList<>();
  final List<ProbeProcess> probes = new ArrayList<>();
  boolean etcdStopped;

  @BeforeAll
  static void up() throws Exception {
    cluster = LocalCluster.up(tmp.resolve("c"), 3, "4G");
    etcd = Faults.env(cluster.dir()).get("ETCFS_ETCD");
    List<Long> pids = LocalEtcd.pids(cluster.dir());
    assertEquals(1, pids.size(), "the local cluster's etcd pid files: " + pids);
    etcdPid = pids.get(0);
  }

  @AfterAll
  static void down() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  @AfterEach
  void stopProbes() throws Exception {
    if (etcdStopped) {
      Faults.signal(etcdPid, "CONT");
    }
    for (ProbeProcess p : probes) {
      p.close();
    }
  }

  /** node1 and node2 on one shared file (a region each), node3 with fsync on its own file. */
  private List<ProbeProcess> startProbes(String phase) throws Exception {
    probes.add(ProbeProcess.start(phase + "-node1", tmp, cluster.mount(1).resolve("shared"), 1,
        RECORD, 0, SHARED_SLOTS, false));
    probes.add(ProbeProcess.start(phase + "-node2", tmp, cluster.mount(2).resolve("shared"), 2,
        RECORD, SHARED_SLOTS * RECORD, SHARED_SLOTS, false));
    probes.add(ProbeProcess.start(phase + "-node3", tmp, cluster.mount(3).resolve("own3"), 3,
        RECORD, 0, OWN_SLOTS, true, "--append"));
    long since = Probe.nowMicros();
    for (ProbeProcess p : probes) {
      p.awaitRecords(20, since, 60_000);
    }
    return probes;
  }

  @Test
  @Order(1)
  void anOutageShorterThanTheLockSessionStallsWritersAndLosesNothing() throws Exception {
    List<ProbeProcess> ps = startProbes("short");
    long stop = Probe.nowMicros();
    Faults.signal(etcdPid, "STOP");
    etcdStopped = true;
    TimeUnit.MILLISECONDS.sleep(1000); // the fault itself: etcd silent for 1 s
    Faults.signal(etcdPid, "CONT");
    etcdStopped = false;
    long resumed = Probe.nowMicros();
    for (ProbeProcess p : ps) {
      p.awaitRecords(10, resumed, 30_000);
    }
    long end = Probe.nowMicros();
    for (ProbeProcess p : ps) {
      assertTrue(p.stop(30_000), p.name + " was stuck");
    }
    StringBuilder report = new StringBuilder("EtcdOutageIT short: etcd stopped "
        + ms(resumed - stop) + ";");
    for (ProbeProcess p : ps) {
      ProbeLog l = p.log();
      report.append(String.format(" %s worst stall %s, errors %d, resumed %s after etcd;",
          p.name, ms(l.worstStallMicros(stop, end)), l.errors.size(),
          ms(l.firstDoneAfter(resumed) - resumed)));
    }
    System.out.println(report);
    for (ProbeProcess p : ps) {
      ProbeLog l = p.log();
      assertEquals(List.of(), l.errors, p.name + " failed during a 1 s etcd outage");
      assertTrue(l.worstStallMicros(stop, end) < 8_000_000, p.name + " stalled too long");
    }
    ProbeProcess own = ps.get(2);
    List<Long> fsynced = own.log().fsyncedBefore(Long.MAX_VALUE);
    assertEquals(List.of(), ProbeLog.verify(cluster.mount(1).resolve("own3"), 3, RECORD, 0,
        OWN_SLOTS, fsynced), "node3's fsynced records, read on node1");
    for (int i = 0; i < 2; i++) {
      ProbeProcess p = ps.get(i);
      assertEquals(List.of(), ProbeLog.verify(cluster.mount(3).resolve("shared"), p.id, RECORD,
          p.offset, SHARED_SLOTS, p.log().latestPerSlot(SHARED_SLOTS).values()),
          p.name + "'s records, read on node3");
    }
  }

  @Test
  @Order(2)
  void anOutageLongerThanTheMembershipLeaseFencesEveryNodeAndLosesNoFsyncedRecord()
      throws Exception {
    Path own3 = cluster.mount(1).resolve("own3");
    long before = java.nio.file.Files.exists(own3) ? java.nio.file.Files.size(own3) : 0;
    long[] old = new long[4];
    for (int n = 1; n <= 3; n++) {
      old[n] = Faults.generation(etcd, "etcfs", "node" + n);
      assertTrue(old[n] > 0, "node" + n + " is no member before the outage");
    }
    List<ProbeProcess> ps = startProbes("long");
    long stop = Probe.nowMicros();
    Faults.signal(etcdPid, "STOP");
    etcdStopped = true;
    // etcd stays silent until every node has fenced itself and 12 s (lease 10 s + margin) passed
    boolean allFenced = Faults.poll(Duration.ofSeconds(25), () -> {
      for (ProbeProcess p : ps) {
        if (p.log().errorsAfter(stop).stream().noneMatch(e -> e.text().contains(
            "Input/output error"))) {
          return false;
        }
      }
      return Probe.nowMicros() - stop > 12_000_000;
    });
    List<Sh.Out> direct = new ArrayList<>();
    for (int n = 1; n <= 3; n++) {
      direct.add(Sh.run("timeout", "30", "sh", "-c", "echo x >> " + cluster.mount(n)
          .resolve("during-outage")));
    }
    Faults.signal(etcdPid, "CONT");
    etcdStopped = false;
    long back = Probe.nowMicros();
    StringBuilder report = new StringBuilder("EtcdOutageIT long: etcd stopped "
        + ms(back - stop) + ";");
    for (ProbeProcess p : ps) {
      ProbeLog l = p.log();
      long lastOk = l.done.stream().mapToLong(ProbeLog.Done::micros).filter(t -> t < back)
          .max().orElse(-1);
      List<ProbeLog.Err> errs = l.errorsAfter(stop);
      report.append(String.format(" %s last write %s after the stop, first error %s after it"
              + " (%s);", p.name, ms(lastOk - stop),
          errs.isEmpty() ? "none" : ms(errs.get(0).micros() - stop),
          errs.isEmpty() ? "-" : errs.get(0).text()));
    }
    System.out.println(report);
    assertTrue(allFenced, "not every node fenced itself (EIO) within 25 s of etcd stopping");
    for (int n = 1; n <= 3; n++) {
      Sh.Out d = direct.get(n - 1);
      assertTrue(d.exit() != 0 && d.err().contains("Input/output error"),
          "a write on node" + n + " with etcd gone past its lease: " + d);
    }
    // Back with etcd, the old generations stay fenced: nothing written through them lands.
    Faults.await("etcd answers again", Duration.ofSeconds(30), () -> Sh.run("etcdctl",
        "--endpoints", etcd, "endpoint", "health").exit() == 0);
    // every acknowledged fsync, also one that returned while etcd was going away
    List<Long> fsynced = ps.get(2).log().fsyncedBefore(Long.MAX_VALUE);
    long since = Probe.nowMicros();
    for (ProbeProcess p : ps) {
      p.stop(30_000);
      assertTrue(p.log().done.stream().noneMatch(d -> d.micros() > since),
          p.name + " wrote through a fenced generation after etcd came back");
    }
    for (int n = 1; n <= 3; n++) {
      Distribution.Result um = cluster.etcfs("umount", cluster.mount(n).toString());
      assertEquals(0, um.exit(), "umount node" + n + ": " + um);
      Distribution.Result m = Faults.mount(cluster, n);
      assertEquals(0, m.exit(), "mount node" + n + " again: " + m);
    }
    assertTrue(java.nio.file.Files.size(own3) >= before, "node3's file shrank");
    List<String> bad = ProbeLog.verify(cluster.mount(1).resolve("own3"), 3, RECORD, before,
        OWN_SLOTS, fsynced);
    assertEquals(List.of(), bad, "records fsynced before and during the outage, read after the"
        + " remount");
    for (int i = 0; i < 2; i++) {
      ProbeProcess p = ps.get(i);
      assertEquals(List.of(), ProbeLog.scan(cluster.mount(3).resolve("shared"), p.id, RECORD,
          p.offset, SHARED_SLOTS), p.name + "'s region of the shared file");
    }
    // Remounted, the nodes find the fenced generations (slots without members) and recover them.
    long remounted = Probe.nowMicros();
    for (int n = 1; n <= 3; n++) {
      long g = old[n];
      long at = Faults.awaitRecovered(etcd, "etcfs", "node" + n, g, Duration.ofSeconds(60));
      System.out.printf("EtcdOutageIT long: node%d generation %d recovered %s after the"
          + " remounts%n", n, g, ms(at - remounted));
    }
    java.nio.file.Files.writeString(cluster.mount(2).resolve("after-outage"), "fine");
    assertEquals("fine", java.nio.file.Files.readString(cluster.mount(3).resolve(
        "after-outage")));
  }
}

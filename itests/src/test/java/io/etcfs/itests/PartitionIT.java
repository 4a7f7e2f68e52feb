package io.etcfs.itests;

import static io.etcfs.itests.Faults.RECORD;
import static io.etcfs.itests.Faults.ms;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * One node cut off from etcd while it still reaches the disk (issue #5): node3 runs in a network
 * namespace of its own and reaches etcd over a veth pair; the test takes the link down while
 * node3 writes. node3 must fence itself within its membership lease (its writes then fail with
 * EIO), node1 must take node3's file over and keep writing the shared file; healed, node3
 * mounts again as a new generation.
 */
@Timeout(300)
class PartitionIT {
  static final long SHARED_SLOTS = 256;
  static final long OWN_SLOTS = 16384;
  private static final DateTimeFormatter LOG_TIME =
      DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSS");

  @TempDir Path tmp;
  LocalCluster cluster;
  NetNs ns;
  final List<ProbeProcess> probes = new ArrayList<>();

  @AfterEach
  void down() throws Exception {
    for (ProbeProcess p : probes) {
      p.close();
    }
    try {
      if (ns != null) {
        ns.heal(); // lets node3 leave cleanly on etcfs down
      }
    } catch (Exception | AssertionError e) {
      System.err.println("cannot heal " + ns.name + ": " + e);
    }
    if (cluster != null) {
      cluster.close(); // etcfs down, then the nodes and etcd killed by pid
    }
    if (ns != null) {
      ns.close();
    }
  }

  @Test
  void aNodeCutOffFromEtcdFencesItselfAndTheOthersTakeOver() throws Exception {
    ns = NetNs.create();
    Faults.step("PartitionIT: start");
    cluster = LocalCluster.adopt(tmp);
    Path dir = cluster.dir();
    String local = startEtcd(dir);
    String viaVeth = local.replace("127.0.0.1", ns.hostIp);
    Path device = dir.resolve("device.img");
    Distribution.Result f = Distribution.etcfs(cluster.runtime(), Duration.ofSeconds(120),
        "format", device.toString(), "--etcd", local, "--size", "2G", "--name", "etcfs");
    assertEquals(0, f.exit(), "etcfs format: " + f);
    Files.writeString(dir.resolve("cluster.env"), "ETCFS_ETCD='" + local + "'\nETCFS_DEVICE='"
        + device + "'\nETCFS_FS='etcfs'\nETCFS_DIR='" + dir + "'\nETCFS_OWN_ETCD='false'\n");
    for (int n = 1; n <= 3; n++) {
      Files.createDirectories(cluster.mount(n));
      Distribution.Result m = n < 3 ? Faults.mount(cluster, n)
          : Faults.mount(cluster, n, viaVeth, ns.prefix());
      assertEquals(0, m.exit(), "mount node" + n + ": " + m);
    }
    Faults.step("PartitionIT: mounted");
    long generation = Faults.generation(local, "etcfs", "node3");
    Path n1 = cluster.mount(1);
    Path n3 = cluster.mount(3);
    Files.createFile(n1.resolve("shared"));
    ProbeProcess shared1 = probe("shared-node1", n1.resolve("shared"), 1, 0, SHARED_SLOTS, false);
    ProbeProcess shared3 = probe("shared-node3", n3.resolve("shared"), 3, SHARED_SLOTS * RECORD,
        SHARED_SLOTS, false);
    ProbeProcess own3 = probe("own-node3", n3.resolve("own3"), 30, 0, OWN_SLOTS, true);
    long since = Probe.nowMicros();
    for (ProbeProcess p : List.of(shared1, shared3, own3)) {
      p.awaitRecords(20, since, 60_000);
    }

    Faults.step("PartitionIT: probes warm; cutting node3 off");
    long cut = Probe.nowMicros();
    ns.cut();
    ProbeProcess takeover = probe("takeover-node1", n1.resolve("own3"), 10, OWN_SLOTS * RECORD,
        4096, false);
    takeover.awaitRecords(1, cut, 30_000);
    Path log3 = dir.resolve("log/node3.log");
    boolean fenced = Faults.poll(Duration.ofSeconds(25), () -> fenceTime(log3).isPresent());
    long fence = fenceTime(log3).orElse(-1L);
    Faults.step("PartitionIT: node3 fenced");
    // Every caller on node3 must get its EIO, at the latest when a lock wait (30 s) gives up.
    boolean eio = Faults.poll(Duration.ofSeconds(35), () -> hasEio(own3, cut)
        && hasEio(shared3, cut));
    shared1.awaitRecords(20, Probe.nowMicros(), 30_000);
    takeover.awaitRecords(20, Probe.nowMicros(), 30_000);
    Faults.step("PartitionIT: survivors watched");
    long end = Probe.nowMicros();
    assertTrue(shared1.stop(30_000) && takeover.stop(30_000), "a probe on node1 was stuck");
    ProbeLog s1 = shared1.log();
    ProbeLog tk = takeover.log();
    ProbeLog o3 = own3.log();
    ProbeLog s3 = shared3.log();
    long firstTakeover = tk.firstDoneAfter(cut);
    System.out.printf("PartitionIT: node3 fenced itself %s after the cut; node1 took node3's file"
            + " over %s after the cut; node1's worst stall on the shared file %s, errors %d;"
            + " node3's probes after the cut: %d + %d writes, %d + %d errors (first: %s);"
            + " first EIO on node3 after the fence: own file %s, shared file %s%n",
        fence < 0 ? "never" : ms(fence - cut), ms(firstTakeover - cut),
        ms(s1.worstStallMicros(cut, end)), s1.errors.size(),
        o3.completedBetween(cut, Long.MAX_VALUE), s3.completedBetween(cut, Long.MAX_VALUE),
        o3.errorsAfter(cut).size(), s3.errorsAfter(cut).size(),
        o3.errorsAfter(cut).stream().findFirst().map(Object::toString).orElse("none"),
        firstEio(o3, cut, fence), firstEio(s3, cut, fence));

    assertTrue(fenced, "node3 did not fence itself within 25 s of losing etcd");
    assertTrue(fence - cut < 12_000_000, "node3 fenced itself " + ms(fence - cut)
        + " after the cut: later than its 10 s lease allows");
    assertTrue(eio, "a probe on node3 got no EIO within 35 s of the cut: blocked in FUSE");
    long settled = fence + 1_000_000; // calls already inside node3 at the fence may still end
    assertEquals(0, o3.completedBetween(settled, Long.MAX_VALUE)
        + s3.completedBetween(settled, Long.MAX_VALUE), "node3 completed writes after fencing");
    assertTrue(firstTakeover - cut < 8_000_000, "node1 took node3's file over only after "
        + ms(firstTakeover - cut));
    assertEquals(List.of(), s1.errors, "node1's shared probe failed");
    assertEquals(List.of(), tk.errors, "node1's takeover probe failed");
    assertTrue(s1.worstStallMicros(cut, end) < 8_000_000, "node1 stalled too long");
    assertEquals(List.of(), ProbeLog.verify(n1.resolve("own3"), 30, RECORD, 0, OWN_SLOTS,
        o3.fsyncedBefore(Long.MAX_VALUE)), "every record node3 fsynced, read on node1");
    assertEquals(List.of(), ProbeLog.verify(n1.resolve("shared"), 1, RECORD, 0, SHARED_SLOTS,
        s1.latestPerSlot(SHARED_SLOTS).values()), "node1's records in the shared file");

    long recovered = Faults.awaitRecovered(local, "etcfs", "node3", generation,
        Duration.ofSeconds(60));
    System.out.printf("PartitionIT: node3's recovery recorded %s after the cut%n",
        ms(recovered - cut));
    shared3.kill();
    own3.kill();
    ns.heal();
    Faults.step("PartitionIT: healed");
    Distribution.Result um = cluster.etcfs("umount", n3.toString());
    assertEquals(0, um.exit(), "umount of the fenced node3: " + um);
    Faults.step("PartitionIT: node3 unmounted");
    Distribution.Result again = Faults.mount(cluster, 3, viaVeth, ns.prefix());
    assertEquals(0, again.exit(), "node3 mounted again after the heal: " + again);
    Faults.step("PartitionIT: node3 mounted again");
    long newGeneration = Faults.generation(local, "etcfs", "node3");
    System.out.printf("PartitionIT: node3 generation %d -> %d after the heal%n", generation,
        newGeneration);
    assertTrue(newGeneration > generation, "node3 did not rejoin as a new generation");
    Files.writeString(n3.resolve("healed"), "node3 is back");
    assertEquals("node3 is back", Files.readString(n1.resolve("healed")));
  }

  private static boolean hasEio(ProbeProcess p, long since) throws Exception {
    return p.log().errorsAfter(since).stream()
        .anyMatch(e -> e.text().contains("Input/output error"));
  }

  private static String firstEio(ProbeLog l, long since, long fence) {
    return l.errorsAfter(since).stream().filter(e -> e.text().contains("Input/output error"))
        .findFirst().map(e -> ms(e.micros() - fence)).orElse("none");
  }

  /** When node3's log says it fenced itself, in wall-clock µs. */
  private static Optional<Long> fenceTime(Path log) throws Exception {
    if (!Files.exists(log)) {
      return Optional.empty();
    }
    for (String l : Files.readAllLines(log)) {
      if (l.contains("fenced itself") && l.length() > 23) {
        LocalDateTime t = LocalDateTime.parse(l.substring(0, 23), LOG_TIME);
        var i = t.atZone(ZoneId.systemDefault()).toInstant();
        return Optional.of(i.getEpochSecond() * 1_000_000L + i.getNano() / 1000);
      }
    }
    return Optional.empty();
  }

  /** etcd on 127.0.0.1 and the host's veth address, one port; its pid file under the cluster. */
  private String startEtcd(Path dir) throws Exception {
    int client = freePort();
    int peer = freePort();
    Path etcdDir = dir.resolve("etcd");
    String clientUrls = "http://127.0.0.1:" + client + ",http://" + ns.hostIp + ":" + client;
    Process p = new ProcessBuilder("etcd", "--name", "p", "--data-dir",
        etcdDir.resolve("etcd0.data").toString(), "--listen-client-urls", clientUrls,
        "--advertise-client-urls", "http://" + ns.hostIp + ":" + client,
        "--listen-peer-urls", "http://127.0.0.1:" + peer,
        "--initial-advertise-peer-urls", "http://127.0.0.1:" + peer,
        "--initial-cluster", "p=http://127.0.0.1:" + peer)
        .redirectErrorStream(true).redirectOutput(etcdDir.resolve("etcd0.log").toFile())
        .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
    Files.writeString(etcdDir.resolve("etcd0.pid"), Long.toString(p.pid()));
    String local = "http://127.0.0.1:" + client;
    Faults.await("etcd answers on 127.0.0.1", Duration.ofSeconds(20),
        () -> p.isAlive() && Sh.run("etcdctl", "--endpoints", local, "endpoint", "health")
            .exit() == 0);
    ns.inside("etcdctl", "--endpoints", "http://" + ns.hostIp + ":" + client, "endpoint",
        "health");
    return local;
  }

  private static int freePort() throws Exception {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  private ProbeProcess probe(String name, Path file, int id, long offset, long slots,
      boolean fsync) throws Exception {
    ProbeProcess p = ProbeProcess.start(name, tmp, file, id, RECORD, offset, slots, fsync);
    probes.add(p);
    return p;
  }
}

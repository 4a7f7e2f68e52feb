package io.etcfs.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32;
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
 * Live switches of the lock backend (issue #15) on three node processes from the tarball: the
 * whole cluster moves between etcd and Hazelcast while every node writes, and nothing a write
 * acknowledged is lost, no process sees an error, and the shell says what it did.
 */
@Timeout(900)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SwitchIT {
  @TempDir static Path tmp;
  static LocalCluster cluster;
  final ExecutorService pool = Executors.newCachedThreadPool();

  @BeforeAll
  static void up() throws Exception {
    cluster = LocalCluster.up(tmp, 3, "2G");
  }

  @AfterAll
  static void down() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  @AfterEach
  void stopThreads() {
    pool.shutdownNow();
  }

  /**
   * One record: {@code node seq crc32(node seq)}, so a torn, lost, doubled or reordered record
   * shows when the file is read back.
   */
  static String record(int node, long seq) {
    String body = "node" + node + " " + seq;
    CRC32 crc = new CRC32();
    crc.update(body.getBytes(StandardCharsets.UTF_8));
    return body + " " + Long.toHexString(crc.getValue()) + "\n";
  }

  @Test
  @Order(1)
  void theLockBackendSwitchesBackAndForthUnderWritersOnEveryNode() throws Exception {
    AtomicBoolean stop = new AtomicBoolean();
    List<Future<Long>> writers = new ArrayList<>();
    for (int n = 1; n <= 3; n++) {
      int node = n;
      Path file = cluster.mount(node).resolve("records-" + node);
      writers.add(pool.submit(() -> {
        long seq = 0;
        // an open file written all along: its lock is let go by each drain (write-back, commit)
        // and asked for again from the new backend by the next write
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE,
            StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
          while (!stop.get()) {
            ch.write(ByteBuffer.wrap(record(node, seq).getBytes(StandardCharsets.UTF_8)));
            seq++;
            if (seq % 50 == 0) {
              ch.force(false);
            }
          }
        }
        return seq;
      }));
    }
    awaitRecords(cluster.mount(1).resolve("records-1"));
    List<String> to = List.of("hazelcast", "etcd", "hazelcast");
    List<Long> pauses = new ArrayList<>();
    for (int i = 0; i < to.size(); i++) {
      // every node takes part; ask from a different one each time, and once from the CLI
      Distribution.Result r = i == 1
          ? cli("switch", "--lock", to.get(i), "--dir", cluster.dir().toString())
          : shell(1 + i % 3, "lock switch " + to.get(i));
      assertEquals(0, r.exit(), r.toString());
      Matcher m = Pattern.compile("switched the lock backend from (\\w+) to (\\w+)"
          + " \\(switch (\\d+), 3 nodes: node1, node2, node3\\)\npause: (\\d+) ms, from the first"
          + " node stopping to the last resuming\nundo: lock switch (\\w+)").matcher(r.out());
      assertTrue(m.find(), r.out());
      assertEquals(to.get(i), m.group(2));
      assertEquals(m.group(1), m.group(5));
      pauses.add(Long.parseLong(m.group(4)));
      for (int n = 1; n <= 3; n++) {
        assertEquals(to.get(i), shell(n, "lock backend").out().strip(), "node" + n);
      }
      // the writers wrote on under the new backend before the next switch
      long before = Files.size(cluster.mount(2).resolve("records-1"));
      awaitGrowth(cluster.mount(2).resolve("records-1"), before);
    }
    stop.set(true);
    for (int n = 1; n <= 3; n++) {
      long written = writers.get(n - 1).get(120, TimeUnit.SECONDS); // no write failed
      assertTrue(written > 0);
      // read on another node: every record, in order, intact
      Path other = cluster.mount(n % 3 + 1).resolve("records-" + n);
      List<String> lines = Files.readAllLines(other);
      assertEquals(written, lines.size(), "records of node" + n + " read on another node");
      for (int seq = 0; seq < lines.size(); seq++) {
        assertEquals(record(n, seq), lines.get(seq) + "\n", "record " + seq + " of node" + n);
      }
    }
    Distribution.Result history = shell(3, "switches");
    List<String> done = history.out().lines().filter(l -> l.contains(": done, pause ")).toList();
    assertEquals(3, done.size(), history.out());
    System.out.println("pauses (ms): " + pauses);
  }

  @Test
  @Order(2)
  void badRequestsAreRefusedBeforeAnythingStops() throws Exception {
    String now = shell(1, "lock backend").out().strip();
    Distribution.Result same = shell(2, "lock switch " + now);
    assertEquals(0, same.exit(), same.toString());
    assertTrue(same.out().contains("uses lock backend " + now + " already; nothing to do"),
        same.out());
    Distribution.Result unknown = shell(2, "lock switch nosuch");
    assertNotEquals(0, unknown.exit(), unknown.toString());
    assertTrue((unknown.out() + unknown.err()).contains(
        "no lock backend 'nosuch' here (installed: etcd, hazelcast)"), unknown.toString());
    Distribution.Result alloc = shell(2, "alloc switch shared");
    assertNotEquals(0, alloc.exit(), alloc.toString());
    assertTrue((alloc.out() + alloc.err()).contains("not built yet"), alloc.toString());
    assertEquals(now, shell(3, "lock backend").out().strip(), "a refused switch changed nothing");
  }

  /**
   * Two requests at once resolve to one; and a flock a process holds on node1 survives the
   * switch (file locks live in the core, not in the inode-lock backend).
   */
  @Test
  @Order(3)
  void twoRequestsAtOnceResolveToOneAndFileLocksSurvive() throws Exception {
    String now = shell(1, "lock backend").out().strip();
    String to = now.equals("etcd") ? "hazelcast" : "etcd";
    Path locked = cluster.mount(1).resolve("locked");
    Files.writeString(locked, "held by a process on node1");
    // -o: sleep does not inherit the lock; flock itself holds it until it is killed
    Process holder = new ProcessBuilder("flock", "-o", "-x", locked.toString(), "sleep", "600")
        .redirectErrorStream(true).start();
    Path other = cluster.mount(2).resolve("locked");
    Faults.await("node1's process holds the flock", Duration.ofSeconds(30),
        () -> Sh.run("flock", "-n", "-x", other.toString(), "true").exit() != 0);
    Future<Distribution.Result> a = pool.submit(() -> shell(1, "lock switch " + to));
    Future<Distribution.Result> b = pool.submit(() -> shell(3, "lock switch " + to));
    List<Distribution.Result> both = List.of(a.get(300, TimeUnit.SECONDS),
        b.get(300, TimeUnit.SECONDS));
    long switched = both.stream().filter(r -> r.out().contains("switched the lock backend"))
        .count();
    assertEquals(1, switched, both.toString());
    for (Distribution.Result r : both) {
      if (!r.out().contains("switched the lock backend")) {
        String said = r.out() + r.err();
        assertTrue(said.contains("another switch is running") || said.contains("already"),
            r.toString());
      }
    }
    for (int n = 1; n <= 3; n++) {
      assertEquals(to, shell(n, "lock backend").out().strip(), "node" + n);
    }
    try {
      assertTrue(holder.isAlive(), "the flock holder died");
      assertEquals(1, Sh.run("flock", "-n", "-x", other.toString(), "true").exit(),
          "the flock held on node1 was lost in the switch");
    } finally {
      holder.descendants().forEach(ProcessHandle::destroy);
      holder.destroy();
      holder.waitFor(30, TimeUnit.SECONDS);
    }
    Faults.await("the flock is free once its holder is gone", Duration.ofSeconds(30),
        () -> Sh.run("flock", "-n", "-x", other.toString(), "true").exit() == 0);
  }

  /**
   * A member that stops answering mid-switch (frozen: SIGSTOP) drops out when its lease expires,
   * and the switch completes without it; a node started while the switch runs comes up on the
   * backend recorded, takes part or follows, and ends on the new one. Last: node3 stays fenced.
   */
  @Test
  @Order(4)
  void aFrozenMemberIsLeftBehindAndANodeStartedMeanwhileEndsOnTheNewBackend() throws Exception {
    String etcd = Faults.env(cluster.dir()).get("ETCFS_ETCD");
    String now = shell(1, "lock backend").out().strip();
    String to = now.equals("etcd") ? "hazelcast" : "etcd";
    long frozen = Faults.nodePid(cluster, 3);
    Faults.signal(frozen, "STOP");
    try {
      Future<Distribution.Result> asked = pool.submit(() -> shell(1, "lock switch " + to));
      Faults.await("the switch request in etcd", Duration.ofSeconds(30),
          () -> !Faults.etcdctl(etcd, "get", "--print-value-only", "/etcfs/etcfs/switch/request")
              .isBlank());
      Files.createDirectories(cluster.mount(4));
      Distribution.Result started = Faults.mount(cluster, 4);
      assertEquals(0, started.exit(), "node4 started during the switch: " + started);
      Distribution.Result r = asked.get(300, TimeUnit.SECONDS);
      assertEquals(0, r.exit(), r.toString());
      assertTrue(r.out().startsWith("switched the lock backend from " + now + " to " + to),
          r.out());
      assertTrue(r.out().contains("node1, node2") && !r.out().contains("node3"), r.out());
      assertTrue(Faults.generation(etcd, "etcfs", "node3") < 0, "node3 is still a member");
      for (int n : new int[] {1, 2, 4}) {
        assertEquals(to, shell(n, "lock backend").out().strip(), "node" + n);
      }
      Files.writeString(cluster.mount(4).resolve("from-node4"), "written on node4 after");
      assertEquals("written on node4 after",
          Files.readString(cluster.mount(1).resolve("from-node4")));
    } finally {
      Faults.signal(frozen, "CONT");
    }
    // node3 comes back fenced: its writes fail, nothing it had is committed under the new backend
    Faults.await("node3's mount refuses writes after its resume", Duration.ofSeconds(60),
        () -> Sh.run("timeout", "20", "sh", "-c", "echo x >> "
            + cluster.mount(3).resolve("after-freeze")).exit() != 0);
  }

  private static void awaitRecords(Path file) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!Files.exists(file) || Files.size(file) == 0) {
      assertTrue(System.nanoTime() < deadline, "no record written to " + file);
      Thread.sleep(20);
    }
  }

  private static void awaitGrowth(Path file, long from) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (Files.size(file) <= from) {
      assertTrue(System.nanoTime() < deadline, file + " did not grow after the switch");
      Thread.sleep(20);
    }
  }

  private static Distribution.Result cli(String... args) throws Exception {
    Distribution.Result r = cluster.etcfs(args);
    System.out.println("$ etcfs " + String.join(" ", args) + "  (exit " + r.exit() + ")\n"
        + r.out() + r.err());
    return r;
  }

  private static Distribution.Result shell(int node, String command) throws Exception {
    Distribution.Result r = cluster.etcfs("shell", cluster.mount(node).toString(), "-c",
        command);
    System.out.println("$ etcfs shell node" + node + " -c '" + command + "'  (exit " + r.exit()
        + ")\n" + r.out() + r.err());
    return r;
  }
}

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

  /** The stop flags of the writers and churners a test started. */
  final List<AtomicBoolean> stops = new java.util.concurrent.CopyOnWriteArrayList<>();

  /**
   * Stops what a test started, also when it failed half-way: writers and churners left running
   * kept files open on the mounts, and once a later test froze node3 the next process this JVM
   * started hung for good (the child closes the descriptors it inherits, and a close on a
   * frozen node's mount waits for that node's answer).
   */
  @AfterEach
  void stopThreads() throws InterruptedException {
    stops.forEach(stop -> stop.set(true));
    pool.shutdown();
    if (!pool.awaitTermination(120, TimeUnit.SECONDS)) {
      pool.shutdownNow();
    }
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

  /** A writer per node, each appending checksummed records to a file of its own. */
  final class Writers {
    final String prefix;
    final AtomicBoolean stop = new AtomicBoolean();
    final List<Future<Long>> written = new ArrayList<>();

    Writers(String prefix) throws Exception {
      this.prefix = prefix;
      stops.add(stop);
      for (int n = 1; n <= 3; n++) {
        int node = n;
        Path file = cluster.mount(node).resolve(prefix + node);
        written.add(pool.submit(() -> {
          long seq = 0;
          // an open file written all along: its lock is let go by each drain (write-back,
          // commit) and asked for again from the new backend by the next write
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
      awaitRecords(cluster.mount(1).resolve(prefix + 1));
    }

    /** node1's file, read on node2: it grows once the writers go on after a switch. */
    void awaitGrowth() throws Exception {
      Path file = cluster.mount(2).resolve(prefix + 1);
      SwitchIT.awaitGrowth(file, Files.size(file));
    }

    /** Stops them; every record each wrote, read on another node, in order and intact. */
    void stopAndVerify() throws Exception {
      stop.set(true);
      for (int n = 1; n <= 3; n++) {
        long count = written.get(n - 1).get(120, TimeUnit.SECONDS); // no write failed
        assertTrue(count > 0);
        Path other = cluster.mount(n % 3 + 1).resolve(prefix + n);
        List<String> lines = Files.readAllLines(other);
        assertEquals(count, lines.size(), "records of node" + n + " read on another node");
        for (int seq = 0; seq < lines.size(); seq++) {
          assertEquals(record(n, seq), lines.get(seq) + "\n", "record " + seq + " of node" + n);
        }
      }
    }
  }

  @Test
  @Order(1)
  void theLockBackendSwitchesBackAndForthUnderWritersOnEveryNode() throws Exception {
    Writers writers = new Writers("records-");
    List<Long> pauses = switchBackAndForth("lock", List.of("hazelcast", "etcd", "hazelcast"),
        writers);
    writers.stopAndVerify();
    Distribution.Result history = shell(3, "switches");
    List<String> done = history.out().lines().filter(l -> l.contains(": done, pause ")).toList();
    assertEquals(3, done.size(), history.out());
    System.out.println("pauses (ms): " + pauses);
  }

  /**
   * Switches {@code kind} ({@code lock} or {@code alloc}) to each of {@code to} in turn, asked
   * from a different node each time and once from the CLI; checks what each said, that every
   * node runs the new backend, and that the writers wrote on after it. The pauses said.
   */
  private List<Long> switchBackAndForth(String kind, List<String> to, Writers writers)
      throws Exception {
    String what = kind.equals("lock") ? "lock backend" : "allocator";
    List<Long> pauses = new ArrayList<>();
    for (int i = 0; i < to.size(); i++) {
      Distribution.Result r = i == 1
          ? cli("switch", "--" + kind, to.get(i), "--dir", cluster.dir().toString())
          : shell(1 + i % 3, kind + " switch " + to.get(i));
      assertEquals(0, r.exit(), r.toString());
      Matcher m = Pattern.compile("switched the " + what + " from (\\w+) to (\\w+)"
          + " \\(switch (\\d+), 3 nodes: node1, node2, node3\\)\npause: (\\d+) ms, from the"
          + " first node stopping to the last resuming\nundo: " + kind + " switch (\\w+)")
          .matcher(r.out());
      assertTrue(m.find(), r.out());
      assertEquals(to.get(i), m.group(2));
      assertEquals(m.group(1), m.group(5));
      pauses.add(Long.parseLong(m.group(4)));
      for (int n = 1; n <= 3; n++) {
        assertEquals(to.get(i), shell(n, kind + " backend").out().strip(), "node" + n);
      }
      // the writers wrote on under the new backend before the next switch
      writers.awaitGrowth();
    }
    return pauses;
  }

  /**
   * The allocator switches arena → shared → arena → shared under a writer and a churner (files
   * rewritten at random sizes and deleted: blocks allocated and freed all along) on every node;
   * then every record and every file is intact, no block is referenced twice, every block the
   * ownership records name belongs to a file that maps it, and each node's free space is the
   * device less exactly those blocks.
   */
  @Test
  @Order(2)
  void theAllocatorSwitchesBackAndForthAndEveryBlockIsAccountedFor() throws Exception {
    Writers writers = new Writers("alloc-records-");
    java.util.Map<String, Long> contents = new java.util.concurrent.ConcurrentHashMap<>();
    List<Future<Integer>> churners = new ArrayList<>();
    for (int n = 1; n <= 3; n++) {
      int node = n;
      churners.add(pool.submit(() -> churn(node, writers.stop, contents)));
    }
    List<Long> pauses = switchBackAndForth("alloc", List.of("shared", "arena", "shared"),
        writers);
    writers.stopAndVerify();
    int rounds = 0;
    for (Future<Integer> c : churners) {
      rounds += c.get(120, TimeUnit.SECONDS); // no operation failed
    }
    assertTrue(rounds > 0, "the churners did nothing");
    // every churned file still there holds what was last written to it, read on another node
    for (java.util.Map.Entry<String, Long> e : contents.entrySet()) {
      Path file = cluster.mount(1).resolve(e.getKey());
      if (e.getValue() >= 0) {
        assertEquals(e.getValue(), crc(Files.readAllBytes(file)), e.getKey() + " on node1");
      } else {
        assertTrue(!Files.exists(file), e.getKey() + " was deleted");
      }
    }
    assertEveryBlockAccountedFor();
    System.out.println("allocator switch pauses (ms): " + pauses + "; churn rounds " + rounds);
  }

  /**
   * Rewrites (at a random size up to 256 KiB) and deletes four files of its own at random until
   * told to stop, reading each back; records what each file should hold ({@code -1}: deleted).
   */
  private static int churn(int node, AtomicBoolean stop, java.util.Map<String, Long> contents)
      throws Exception {
    java.util.Random random = new java.util.Random(node);
    int rounds = 0;
    while (!stop.get()) {
      String name = "churn-" + node + "-" + random.nextInt(4);
      Path file = cluster.mount(node).resolve(name);
      if (random.nextInt(4) == 0) {
        Files.deleteIfExists(file);
        contents.put(name, -1L);
      } else {
        byte[] data = new byte[1 + random.nextInt(256 * 1024)];
        random.nextBytes(data);
        Files.write(file, data);
        contents.put(name, crc(data));
        assertEquals(crc(data), crc(Files.readAllBytes(file)), name + " read back on node" + node);
      }
      rounds++;
    }
    return rounds;
  }

  static long crc(byte[] data) {
    CRC32 crc = new CRC32();
    crc.update(data);
    return crc.getValue();
  }

  /**
   * The block ownership records in etcd against every file's extent map (the shell's {@code
   * extents}) and every node's {@code statfs}: no block owned twice, every mapped block owned by
   * its file, nothing owned that no file maps, and free = total - owned on every node. Unlinks
   * are committed in the background (a directory delegation), so this is looked at until it
   * holds or a minute has passed; the last look's findings are the failure.
   */
  private static void assertEveryBlockAccountedFor() throws Exception {
    String[] last = {null};
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (true) {
      for (int n = 1; n <= 3; n++) {
        Sh.run("stat", "-f", cluster.mount(n).toString()); // statfs settles queued unlinks
      }
      last[0] = accountingProblem();
      if (last[0] == null) {
        return;
      }
      if (System.nanoTime() > deadline) {
        String etcd = Faults.env(cluster.dir()).get("ETCFS_ETCD");
        throw new AssertionError(last[0] + "\norphans:\n" + Faults.etcdctl(etcd, "get",
            "--prefix", "/etcfs/etcfs/orphans/"));
      }
      Thread.sleep(500);
    }
  }

  /** What does not add up, or null. */
  private static String accountingProblem() throws Exception {
    String etcd = Faults.env(cluster.dir()).get("ETCFS_ETCD");
    java.util.TreeMap<Long, Long> owner = new java.util.TreeMap<>();
    List<String> kv = Faults.etcdctl(etcd, "get", "--prefix", "/etcfs/etcfs/blocks/").lines()
        .filter(l -> !l.isBlank()).toList();
    for (int i = 0; i + 1 < kv.size(); i += 2) {
      long start = Long.parseUnsignedLong(kv.get(i).substring(kv.get(i).lastIndexOf('/') + 1),
          16);
      String[] v = kv.get(i + 1).split(":");
      long ino = Long.parseUnsignedLong(v[0], 16);
      for (long b = start; b < start + Long.parseLong(v[1]); b++) {
        Long before = owner.put(b, ino);
        if (before != null) {
          return "block " + b + " has two ownership records: inodes " + before + " and " + ino;
        }
      }
    }
    Pattern row = Pattern.compile("(?m)^\\s*(\\d+)\\s+(\\d+)\\s+(\\d+)\\s+\\d+\\s+\\d+\\s*$");
    Pattern of = Pattern.compile("extent\\(s\\) of inode (\\d+)");
    long mapped = 0;
    java.util.Set<Long> files = new java.util.TreeSet<>();
    try (var list = Files.list(cluster.mount(1))) {
      for (Path f : list.filter(Files::isRegularFile).toList()) {
        Distribution.Result r = cluster.etcfs("shell", cluster.mount(1).toString(), "-c",
            "extents /" + f.getFileName());
        Matcher ino = of.matcher(r.out());
        if (r.exit() != 0 || !ino.find()) {
          return "extents of " + f.getFileName() + ": " + r;
        }
        long i = Long.parseLong(ino.group(1));
        files.add(i);
        Matcher m = row.matcher(r.out());
        while (m.find()) {
          long dev = Long.parseLong(m.group(2));
          for (long b = dev; b < dev + Long.parseLong(m.group(3)); b++) {
            if (!Long.valueOf(i).equals(owner.get(b))) {
              return f.getFileName() + " (inode " + i + ") maps block " + b + ", owned by "
                  + owner.get(b);
            }
            mapped++;
          }
        }
      }
    }
    if (owner.size() != mapped) {
      java.util.Set<Long> leaked = new java.util.TreeSet<>(owner.values());
      leaked.removeAll(files);
      return owner.size() + " blocks owned, " + mapped + " mapped by the files " + files
          + "; owners no file in / is: " + leaked;
    }
    long owned = owner.size();
    for (int n = 1; n <= 3; n++) {
      String[] df = Sh.run("stat", "-f", "-c", "%b %f", cluster.mount(n).toString()).out()
          .strip().split(" ");
      if (Long.parseLong(df[1]) != Long.parseLong(df[0]) - owned) {
        return "node" + n + "'s statfs: " + df[1] + " free of " + df[0] + ", " + owned
            + " owned";
      }
    }
    return null;
  }

  @Test
  @Order(3)
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
    Distribution.Result alloc = shell(2, "alloc switch nosuch");
    assertNotEquals(0, alloc.exit(), alloc.toString());
    assertTrue((alloc.out() + alloc.err()).contains(
        "no allocator 'nosuch' here (installed: arena, shared)"), alloc.toString());
    String allocNow = shell(1, "alloc backend").out().strip();
    Distribution.Result sameAlloc = shell(3, "alloc switch " + allocNow);
    assertEquals(0, sameAlloc.exit(), sameAlloc.toString());
    assertTrue(sameAlloc.out().contains("uses allocator " + allocNow + " already; nothing to do"),
        sameAlloc.out());
    assertEquals(now, shell(3, "lock backend").out().strip(), "a refused switch changed nothing");
  }

  /**
   * Two requests at once resolve to one; and a flock a process holds on node1 survives the
   * switch (file locks live in the core, not in the inode-lock backend).
   */
  @Test
  @Order(4)
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
  @Order(5)
  void aFrozenMemberIsLeftBehindAndANodeStartedMeanwhileEndsOnTheNewBackend() throws Exception {
    String etcd = Faults.env(cluster.dir()).get("ETCFS_ETCD");
    String now = shell(1, "lock backend").out().strip();
    String to = now.equals("etcd") ? "hazelcast" : "etcd";
    if (now.equals("etcd")) {
      // node3 freezes once it has stopped the Hazelcast member the last switch left: a frozen
      // node's member still registered holds up the members a switch to Hazelcast starts, and
      // the switch rolls back "not ready" (docs/ARCHITECTURE.md, "A frozen node's member")
      Faults.await("node3's Hazelcast member stopped", Duration.ofSeconds(60),
          () -> Faults.etcdctl(etcd, "get", "--prefix", "--keys-only",
              "/etcfs/etcfs/hazelcast/node3").isBlank());
    }
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

  /**
   * A member killed (SIGKILL) while a switch waits for the others: its lease runs out, it is
   * fenced and recovered as any dead node, and the switch completes with the living; what it
   * wrote and synced before it died is there on the new backend. (After the frozen-node test:
   * node1, node2 and node4 are live, node3 fenced.) node4 is held (SIGSTOP) for a moment so
   * that the kill lands while the switch is under way, whatever the machine's speed.
   */
  @Test
  @Order(6)
  void aNodeKilledMidSwitchIsRecoveredAndTheSwitchCompletesWithoutIt() throws Exception {
    String etcd = Faults.env(cluster.dir()).get("ETCFS_ETCD");
    String now = shell(1, "lock backend").out().strip();
    String to = now.equals("etcd") ? "hazelcast" : "etcd";
    Path synced = cluster.mount(2).resolve("synced-on-node2");
    try (FileChannel ch = FileChannel.open(synced, StandardOpenOption.CREATE,
        StandardOpenOption.WRITE)) {
      ch.write(ByteBuffer.wrap("synced before the kill".getBytes(StandardCharsets.UTF_8)));
      ch.force(true);
    }
    long generation = Faults.generation(etcd, "etcfs", "node2");
    long victim = Faults.nodePid(cluster, 2);
    long held = Faults.nodePid(cluster, 4);
    Faults.signal(held, "STOP");
    Future<Distribution.Result> asked;
    try {
      asked = pool.submit(() -> shell(1, "lock switch " + to));
      Faults.await("the switch request in etcd", Duration.ofSeconds(30),
          () -> !Faults.etcdctl(etcd, "get", "--print-value-only", "/etcfs/etcfs/switch/request")
              .isBlank());
      DeathWatch watch = DeathWatch.start(victim);
      Faults.signal(victim, "KILL");
      assertTrue(watch.awaitDeath(30_000) > 0, "node2 still alive 30 s after SIGKILL");
    } finally {
      Faults.signal(held, "CONT"); // well inside node4's lease: it stays a member
    }
    Distribution.Result r = asked.get(300, TimeUnit.SECONDS);
    assertEquals(0, r.exit(), r.toString());
    assertTrue(r.out().startsWith("switched the lock backend from " + now + " to " + to),
        r.out());
    assertTrue(r.out().contains("node1") && r.out().contains("node4"), r.out());
    // node2, if the cutover counted it (it answered before it died), is not waited for
    assertTrue(!r.out().contains("not resumed yet"), r.out());
    Faults.awaitRecovered(etcd, "etcfs", "node2", generation, Duration.ofSeconds(90));
    for (int n : new int[] {1, 4}) {
      assertEquals(to, shell(n, "lock backend").out().strip(), "node" + n);
    }
    Path onNode1 = cluster.mount(1).resolve("synced-on-node2");
    assertEquals("synced before the kill", Files.readString(onNode1));
    Files.writeString(onNode1, " and taken over", StandardOpenOption.APPEND);
    assertEquals("synced before the kill and taken over",
        Files.readString(cluster.mount(4).resolve("synced-on-node2")));
    Distribution.Result history = shell(4, "switches");
    assertTrue(history.out().lines().anyMatch(l -> l.contains(now + " -> " + to)
        && l.contains(": done")), history.out());
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

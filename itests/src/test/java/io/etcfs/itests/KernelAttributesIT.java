package io.etcfs.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The kernel keeps the attributes of a file nobody writes without its inode lock (the low-level
 * front end, issue #13): a node stating a file another node wrote and gave back asks etcfs
 * once, not at every stat; and when a writer comes, its lock request drops them on the other
 * node, which then states the new size at once. The attribute timeout is a minute here, so that
 * only the invalidation can explain a new size seen within seconds.
 */
@Timeout(300)
class KernelAttributesIT {
  @TempDir static Path tmp;
  static LocalCluster cluster;
  static Path n1;
  static Path n2;

  @BeforeAll
  static void up() throws Exception {
    cluster = LocalCluster.up(tmp, 2, "1G", Map.of("ETCFS_NODE_CONFIG",
        "io.etcfs.fuse3.attrTimeoutSeconds=60,io.etcfs.fuse3.entryTimeoutSeconds=60"));
    n1 = cluster.mount(1);
    n2 = cluster.mount(2);
  }

  @AfterAll
  static void down() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void attributesOfAFileNobodyWritesAreKeptAndDroppedWhenAWriterComes() throws Exception {
    Path name = Path.of("kept");
    Files.writeString(n1.resolve(name), "twelve bytes");
    long ino = (Long) Files.getAttribute(n1.resolve(name), "unix:ino");
    // node1's clean lock is made shared a second after the close: nobody writes it then
    Faults.await("node1 to stop holding " + ino + " exclusively", Duration.ofSeconds(30),
        () -> !shell(n1, "locks --all --json")
            .contains("{\"inode\": " + ino + ", \"mode\": \"X\""));
    assertEquals(12, Files.size(n2.resolve(name)));
    long before = asked(n2);
    for (int i = 0; i < 50; i++) {
      assertEquals(12, Files.size(n2.resolve(name)));
    }
    long asked = asked(n2) - before;
    assertTrue(asked <= 2, "50 stats on node2 asked etcfs " + asked + " times");
    assertTrue(!shell(n2, "locks").contains(" " + ino + " "), "node2 took a lock to state it");

    for (int round = 1; round <= 5; round++) {
      long size = 12 + round;
      Files.writeString(n1.resolve(name), "+", StandardOpenOption.APPEND);
      long t0 = System.nanoTime();
      Faults.await("node2 to state size " + size, Duration.ofSeconds(20),
          () -> Files.size(n2.resolve(name)) == size);
      double seconds = (System.nanoTime() - t0) / 1e9;
      System.out.printf("round %d: node2 stated node1's append after %.3f s%n", round, seconds);
      assertTrue(seconds < 10, "the attributes were not dropped: " + seconds + " s");
    }
    assertEquals("twelve bytes+++++",
        Files.readString(n2.resolve(name), StandardCharsets.UTF_8));
  }

  /**
   * The node widens its mount's read-ahead window to a megabyte, so a cold sequential read
   * reaches etcfs in 1 MiB requests: 16 MiB that node2 never had cached take at most a few more
   * than 16 read calls (the kernel's default 128 KiB window would take 128).
   */
  @Test
  void aColdSequentialReadArrivesInRequestsOfAMegabyte() throws Exception {
    Path name = Path.of("sequential");
    byte[] data = new byte[16 << 20];
    new java.util.Random(13).nextBytes(data);
    Files.write(n1.resolve(name), data);
    String device = deviceOf(n2);
    Path window = Path.of("/sys/class/bdi", device, "read_ahead_kb");
    Faults.await("node2's read-ahead window of 1024 KiB", Duration.ofSeconds(30),
        () -> Files.readString(window).trim().equals("1024"));
    long before = calls(shell(n2, "stats"), "read");
    byte[] read;
    try (var in = Files.newInputStream(n2.resolve(name))) {
      read = in.readAllBytes();
    }
    long reads = calls(shell(n2, "stats"), "read") - before;
    assertTrue(java.util.Arrays.equals(data, read), "node2 read other bytes than node1 wrote");
    System.out.printf("16 MiB read cold on node2 in %d read calls%n", reads);
    assertTrue(reads >= 16 && reads <= 24, "16 MiB read in " + reads + " read calls");
  }

  /**
   * The kernel keeps a symlink's target (FUSE_CAP_CACHE_SYMLINKS): a target never changes, a
   * new one is a new inode. node2 asks etcfs once however often the link is read, and reads
   * the new target of a link node1 replaced.
   */
  @Test
  void aSymlinksTargetIsAskedForOnceAndAReplacedLinkReadsItsNewTarget() throws Exception {
    Path link = n1.resolve("link");
    Files.createSymbolicLink(link, Path.of("first-target"));
    long before = calls(shell(n2, "stats"), "readlink");
    for (int i = 0; i < 5; i++) {
      assertEquals(Path.of("first-target"), Files.readSymbolicLink(n2.resolve("link")));
    }
    assertEquals(1, calls(shell(n2, "stats"), "readlink") - before, "node2's readlink calls");
    Files.delete(link);
    Files.createSymbolicLink(link, Path.of("second-target"));
    Faults.await("node2 reads the replaced link's target", Duration.ofSeconds(10),
        () -> {
          try {
            return Path.of("second-target").equals(Files.readSymbolicLink(n2.resolve("link")));
          } catch (java.nio.file.NoSuchFileException between) {
            return false;
          }
        });
  }

  /**
   * Requests run on the node's own Java threads (Fuse3Session.runLoop), not on libfuse's native
   * loop threads, which jffi attached to the JVM as a new java.lang.Thread for every callback
   * and detached after (with libfuse's loop: about one thread started per request, two thirds
   * of a cold git status's CPU). 400 look-ups of names nobody has, each one a FUSE request, may
   * start a few workers, not hundreds of threads; the JVM's own counter says how many started.
   */
  @Test
  void requestsRunOnTheNodesOwnThreadsNotOnesAttachedPerCall() throws Exception {
    long pid = Faults.nodePid(cluster, 2);
    Files.createDirectories(n1.resolve("absent-names"));
    long before = threadsStarted(pid);
    long asked = asked(n2);
    for (int i = 0; i < 400; i++) {
      assertTrue(Files.notExists(n2.resolve("absent-names").resolve("none" + i)));
    }
    long requests = asked(n2) - asked;
    long started = threadsStarted(pid) - before;
    System.out.printf("%d look-ups on node2 started %d threads%n", requests, started);
    assertTrue(requests >= 400, "the look-ups reached node2: " + requests);
    assertTrue(started < 40, started + " threads started for " + requests + " requests");
  }

  /** java.threads.started of a JVM, from jcmd's view of its performance counters. */
  private static long threadsStarted(long pid) throws Exception {
    String jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd").toString();
    Sh.Out out = Sh.run(jcmd, Long.toString(pid), "PerfCounter.print");
    out.ok();
    Matcher m = Pattern.compile("(?m)^java\\.threads\\.started=(\\d+)").matcher(out.out());
    assertTrue(m.find(), "no java.threads.started in jcmd's output: " + out);
    return Long.parseLong(m.group(1));
  }

  /**
   * The node lets the kernel keep 64 background requests (releases, read-ahead) in flight to it,
   * not the kernel's 12: behind 12 slow releases the releases of many writers backed up for
   * seconds (see Fuse3Session.MAX_BACKGROUND). The kernel shows what it took in the FUSE control
   * filesystem, which is mounted here if the machine has not (systemd mounts it at boot).
   */
  @Test
  void theKernelKeeps64BackgroundRequestsInFlight() throws Exception {
    Path connections = Path.of("/sys/fs/fuse/connections");
    if (!Files.readString(Path.of("/proc/self/mountinfo")).contains(" " + connections + " ")) {
      Sh.run("mount", "-t", "fusectl", "fusectl", connections.toString()).ok();
    }
    String minor = deviceOf(n1).split(":")[1];
    assertEquals("64", Files.readString(connections.resolve(minor).resolve("max_background"))
        .trim(), "node1's connection");
    assertEquals("48", Files.readString(connections.resolve(minor)
        .resolve("congestion_threshold")).trim(), "node1's connection");
  }

  /**
   * The device number ("major:minor") of the mount at a path, from its root's st_dev (glibc's
   * major()/minor() encoding), as /sys/class/bdi names it.
   */
  private static String deviceOf(Path mount) throws Exception {
    long dev = (Long) Files.getAttribute(mount, "unix:dev");
    long major = ((dev >>> 8) & 0xfff) | ((dev >>> 32) & 0xfffff000L);
    long minor = (dev & 0xff) | ((dev >>> 12) & 0xffffff00L);
    return major + ":" + minor;
  }

  /** The getattr and lookup calls node {@code mount} has answered. */
  private static long asked(Path mount) throws Exception {
    String stats = shell(mount, "stats");
    return calls(stats, "getattr") + calls(stats, "lookup");
  }

  private static long calls(String stats, String op) {
    Matcher m = Pattern.compile("(?m)^" + op + " +([\\d,]+) ").matcher(stats);
    return m.find() ? Long.parseLong(m.group(1).replace(",", "")) : 0;
  }

  private static String shell(Path mount, String command) throws Exception {
    Distribution.Result r = cluster.etcfs("shell", mount.toString(), "-c", command);
    assertEquals(0, r.exit(), command + ": " + r);
    return r.out();
  }
}

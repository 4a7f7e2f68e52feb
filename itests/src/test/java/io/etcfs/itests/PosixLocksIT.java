package io.etcfs.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
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
 * fcntl and flock locks between node processes from the tarball, each with its own FUSE mount of
 * one filesystem: they exclude each other across nodes as between processes of one machine, and
 * a killed node's locks are free on the others within seconds (issue #4).
 *
 * <p>The test JVM locks through two mounts at once: Java's own overlap check is per (device,
 * inode), and every mount is its own device, so only the cluster decides.
 */
@Timeout(600)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PosixLocksIT {
  @TempDir static Path tmp;
  static LocalCluster cluster;
  static Path n1;
  static Path n2;
  static Path n3;
  final ExecutorService pool = Executors.newCachedThreadPool();

  @BeforeAll
  static void up() throws Exception {
    cluster = LocalCluster.up(tmp, 3, "1G");
    n1 = cluster.mount(1);
    n2 = cluster.mount(2);
    n3 = cluster.mount(3);
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

  private static FileChannel open(Path file) throws IOException {
    return FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
        StandardOpenOption.WRITE);
  }

  @Test
  @Order(1)
  void anExclusiveFcntlLockOnOneNodeExcludesTheOthers() throws Exception {
    Files.writeString(n1.resolve("fcntl"), "data");
    try (FileChannel a = open(n1.resolve("fcntl")); FileChannel b = open(n2.resolve("fcntl"))) {
      FileLock held = a.lock();
      assertNull(b.tryLock(), "node2 got a write lock node1 holds");
      assertNull(b.tryLock(0, 1, true), "node2 got a read lock under node1's write lock");
      assertEquals("1 0 0 0", getlk(n3.resolve("fcntl")),
          "F_GETLK on node3: F_WRLCK from 0 to the end, pid 0 (another node's process)");
      held.release();
      FileLock mine = b.tryLock();
      assertNotNull(mine, "released on node1, free on node2");
      assertNull(a.tryLock(0, 1, true));
    }
  }

  @Test
  @Order(2)
  void byteRangesConflictAcrossNodesOnlyWhereTheyOverlap() throws Exception {
    try (FileChannel a = open(n1.resolve("ranges")); FileChannel b = open(n2.resolve("ranges"))) {
      FileLock first = a.lock(0, 100, false);
      assertNotNull(b.tryLock(100, 100, false), "the next 100 bytes are free");
      assertNull(b.tryLock(99, 1, true));
      first.release();
      FileLock again = a.lock(0, 50, false); // a smaller range frees what it no longer covers
      assertNotNull(b.tryLock(50, 50, false));
      assertNull(b.tryLock(0, 1, false));
      again.release();
    }
  }

  @Test
  @Order(3)
  void sharedLocksCoexistAcrossNodes() throws Exception {
    try (FileChannel a = open(n1.resolve("shared")); FileChannel b = open(n2.resolve("shared"));
        FileChannel c = open(n3.resolve("shared"))) {
      a.lock(0, Long.MAX_VALUE, true);
      assertNotNull(b.tryLock(0, Long.MAX_VALUE, true), "two readers on two nodes");
      assertNull(c.tryLock(0, 10, false), "a writer on a third node waits for both");
    }
  }

  @Test
  @Order(4)
  void aBlockedLockOnNode2IsGrantedWhenNode1sHolderCloses() throws Exception {
    Path name = Path.of("handover");
    FileChannel a = open(n1.resolve(name));
    a.lock();
    try (FileChannel b = open(n2.resolve(name))) {
      AtomicReference<Thread> waiter = new AtomicReference<>();
      Future<FileLock> granted = pool.submit(() -> {
        waiter.set(Thread.currentThread());
        return b.lock();
      });
      awaitInLockSyscall(waiter);
      assertTrue(!granted.isDone(), "node2's lock() returned while node1 held the lock");
      a.close(); // close() lets go of the process's fcntl locks
      FileLock lock = granted.get(30, TimeUnit.SECONDS);
      assertTrue(lock.isValid() && !lock.isShared());
    }
  }

  /** Until the thread is inside fcntl(F_SETLKW), i.e. its request is in the cluster's hands. */
  private static void awaitInLockSyscall(AtomicReference<Thread> thread) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (System.nanoTime() - deadline < 0) {
      Thread t = thread.get();
      if (t != null && Arrays.stream(t.getStackTrace())
          .anyMatch(f -> f.getMethodName().equals("lock0"))) {
        return;
      }
      Thread.onSpinWait();
    }
    throw new AssertionError("the waiter never reached fcntl(F_SETLKW)");
  }

  @Test
  @Order(5)
  void flockExcludesAcrossNodesAndAWaiterGetsItWhenTheHolderExits() throws Exception {
    Path file = n1.resolve("flocked");
    Files.writeString(file, "x");
    try (Holder h = Holder.flock(file, "-x")) {
      assertEquals(1, flock(n2.resolve("flocked"), "-n"), "flock -n on node2: held on node1");
      assertEquals(1, flock(n3.resolve("flocked"), "-s", "-n"));
      long t0 = System.nanoTime();
      assertEquals(1, flock(n2.resolve("flocked"), "-w", "1"), "flock -w 1 times out");
      assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(20),
          "flock -w ended by its own timer, not by the cluster's wait bound");
      Process waiter = start("flock", "-w", "60", n2.resolve("flocked").toString(), "true");
      h.close();
      assertTrue(waiter.waitFor(60, TimeUnit.SECONDS));
      assertEquals(0, waiter.exitValue(), "node2's waiting flock got the lock");
    }
    try (Holder s = Holder.flock(n1.resolve("flocked"), "-s")) {
      assertEquals(0, flock(n2.resolve("flocked"), "-s", "-n"), "shared on two nodes");
      assertEquals(1, flock(n3.resolve("flocked"), "-n"));
    }
  }

  @Test
  @Order(6)
  void flockAndFcntlLocksDoNotConflict() throws Exception {
    Files.writeString(n1.resolve("both"), "x");
    try (Holder h = Holder.flock(n1.resolve("both"), "-x");
        FileChannel b = open(n2.resolve("both"))) {
      assertNotNull(b.tryLock(), "an fcntl lock beside another node's flock lock");
      assertEquals(1, flock(n3.resolve("both"), "-n"));
    }
  }

  @Test
  @Order(100)
  void aKilledNodesLocksAreFreeOnTheOthersWithinSeconds() throws Exception {
    Files.writeString(n1.resolve("orphaned"), "x");
    FileChannel onNode3 = open(n3.resolve("orphaned"));
    Holder flockOnNode3 = Holder.flock(n3.resolve("orphaned"), "-x");
    try (FileChannel onNode1 = open(n1.resolve("orphaned"))) {
      onNode3.lock();
      assertNull(onNode1.tryLock());
      assertEquals(1, flock(n1.resolve("orphaned"), "-n"));
      long pid = Processes.pid(cluster.dir().resolve("run/node3.pid")).orElseThrow();
      ProcessHandle node3 = ProcessHandle.of(pid).orElseThrow();
      long killed = System.nanoTime();
      node3.destroyForcibly();
      node3.onExit().get(30, TimeUnit.SECONDS);
      double exited = (System.nanoTime() - killed) / 1e9;
      FileLock got = null;
      while (got == null && System.nanoTime() - killed < TimeUnit.SECONDS.toNanos(15)) {
        got = onNode1.tryLock();
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10)); // each try is an etcd read
      }
      double seconds = (System.nanoTime() - killed) / 1e9;
      assertNotNull(got, "node3's fcntl lock outlived it by 15 s");
      System.out.printf("node3's fcntl lock was free on node1 %.2f s after SIGKILL (the JVM"
          + " was gone after %.2f s)%n", seconds, exited);
      assertTrue(seconds < 8, "node3's fcntl lock lasted " + seconds + " s after SIGKILL");
      assertEquals(0, flock(n1.resolve("orphaned"), "-w", "10"), "node3's flock lock is gone");
    } finally {
      flockOnNode3.kill();
      try {
        onNode3.close();
      } catch (IOException e) {
        // its mount died with node3
      }
    }
  }

  /** perl (perl-base, on every Debian machine) asks F_GETLK for a write lock on all of a file. */
  private static String getlk(Path file) throws Exception {
    String script = "use Fcntl; open(my $fh, '+<', $ARGV[0]) or die \"open: $!\";"
        + " my $fl = pack('s s x4 q q l x4', F_WRLCK, 0, 0, 0, 0);"
        + " fcntl($fh, F_GETLK, $fl) or die \"getlk: $!\";"
        + " my ($t, $w, $s, $l, $p) = unpack('s s x4 q q l x4', $fl); print \"$t $s $l $p\";";
    return Sh.run("perl", "-e", script, file.toString()).ok().out();
  }

  /** util-linux flock(1) running {@code true}: its exit status (1: the lock is held). */
  private static int flock(Path file, String... options) throws Exception {
    String[] cmd = new String[options.length + 3];
    cmd[0] = "flock";
    System.arraycopy(options, 0, cmd, 1, options.length);
    cmd[options.length + 1] = file.toString();
    cmd[options.length + 2] = "true";
    return Sh.run(cmd).exit();
  }

  private static Process start(String... cmd) throws IOException {
    return new ProcessBuilder(cmd).redirectErrorStream(true).start();
  }

  /** A flock(1) that holds its lock until closed: it says "held", then waits for its stdin. */
  private static final class Holder implements AutoCloseable {
    private final Process process;

    private Holder(Process process) {
      this.process = process;
    }

    static Holder flock(Path file, String mode) throws Exception {
      Process p = start("flock", mode, file.toString(), "sh", "-c", "echo held; exec cat");
      BufferedReader out = new BufferedReader(
          new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
      String line = out.readLine();
      if (!"held".equals(line)) {
        p.destroyForcibly();
        throw new AssertionError("flock holder on " + file + " said " + line);
      }
      return new Holder(p);
    }

    /** Ends the holder: its lock goes with the last close of its file. */
    @Override
    public void close() throws Exception {
      process.getOutputStream().close();
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        kill();
        throw new AssertionError("flock holder did not exit");
      }
    }

    void kill() {
      process.destroyForcibly();
    }
  }
}

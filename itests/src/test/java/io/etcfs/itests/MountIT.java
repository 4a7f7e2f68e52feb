package io.etcfs.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.testing.EtcdCluster;
import io.etcfs.testing.EtcdExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code format}, {@code mount} and {@code umount} from the tarball against a real etcd: the
 * good path, and every refusal as one line with a non-zero exit and nothing left running.
 */
@Timeout(600)
@ExtendWith(EtcdExtension.class)
class MountIT {
  private static final Duration T = Duration.ofSeconds(180);
  @TempDir Path tmp;
  private Path runtime;
  private Path image;
  private Path mp;
  private Path state;
  private String etcd;
  private String fs;

  @BeforeEach
  void format(EtcdCluster cluster, org.junit.jupiter.api.TestInfo info) throws Exception {
    etcd = cluster.endpoints();
    fs = "fs-" + info.getTestMethod().orElseThrow().getName().toLowerCase().replaceAll("[^a-z]", "");
    fs = fs.substring(0, Math.min(fs.length(), 40));
    runtime = Files.createDirectories(tmp.resolve("rt"));
    image = tmp.resolve("dev.img");
    mp = Files.createDirectories(tmp.resolve("mnt"));
    state = tmp.resolve("state");
    Distribution.Result r = etcfs("format", image.toString(), "--size", "256M", "--etcd", etcd,
        "--name", fs);
    assertEquals(0, r.exit(), r.toString());
    assertTrue(r.out().contains("formatted " + image), r.toString());
  }

  @AfterEach
  void killLeftovers() throws Exception {
    Processes.killAll(tmp);
  }

  private Distribution.Result etcfs(String... args) throws Exception {
    return Distribution.etcfs(runtime, T, args);
  }

  private Distribution.Result mount(String... extra) throws Exception {
    String[] base = {"mount", image.toString(), mp.toString(), "--etcd", etcd, "--name", fs,
        "--node", "n1", "--state-dir", state.toString()};
    String[] all = java.util.Arrays.copyOf(base, base.length + extra.length);
    System.arraycopy(extra, 0, all, base.length, extra.length);
    return etcfs(all);
  }

  @Test
  void mountThenUmount() throws Exception {
    Distribution.Result m = mount();
    assertEquals(0, m.exit(), m.toString());
    assertTrue(m.out().contains("node n1 joined '" + fs + "'"), m.toString());
    assertTrue(m.out().contains("undo: etcfs umount " + mp), m.toString());
    long pid = Processes.pid(state.resolve("n1.pid")).orElseThrow();
    assertTrue(Processes.alive(pid));
    assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(
        Files.getPosixFilePermissions(state.resolve("n1.sock"))), "control socket is not owner-only");

    Distribution.Result again = etcfs("mount", image.toString(),
        Files.createDirectories(tmp.resolve("mnt2")).toString(), "--etcd", etcd, "--name", fs,
        "--node", "n1", "--state-dir", tmp.resolve("state2").toString());
    assertEquals(1, again.exit(), again.toString());
    assertEquals("etcfs: node name 'n1' is already a member of '" + fs
        + "' (choose another --node, or wait for its lease to expire)", again.errLines().get(0));

    Distribution.Result u = etcfs("umount", mp.toString());
    assertEquals(0, u.exit(), u.toString());
    assertTrue(u.out().contains("node n1 left the cluster cleanly"), u.toString());
    assertFalse(Processes.alive(pid));
    Distribution.Result st = etcfs("status", "--etcd", etcd, "--name", fs);
    assertTrue(st.out().contains("members     0"), st.toString());
  }

  /**
   * close does not wait for the commit (a file's release commits it, after close returned), so
   * an unmount right after many files were written and closed must still commit every one:
   * releases in flight finish before the node leaves, and releases the kernel dropped at the
   * unmount are done by the front end.
   */
  @Test
  void anUnmountRightAfterWritesKeepsEveryClosedFile() throws Exception {
    assertEquals(0, mount().exit());
    int files = 300;
    for (int i = 0; i < files; i++) {
      Files.writeString(mp.resolve("closed-" + i), "file " + i + " closed, never fsynced");
    }
    Distribution.Result u = etcfs("umount", mp.toString());
    assertEquals(0, u.exit(), u.toString());
    assertEquals(0, mount().exit());
    for (int i = 0; i < files; i++) {
      assertEquals("file " + i + " closed, never fsynced",
          Files.readString(mp.resolve("closed-" + i)), "closed-" + i);
    }
    assertEquals(0, etcfs("umount", mp.toString()).exit());
  }

  /**
   * The fence options reach the node: the membership's configuration selects the agent and its
   * timeout, the exec agent gets its command, and the reservation agent, not selected, is not
   * there at all (and does not keep the node from being whole).
   */
  @Test
  void theSelectedFenceAgentIsConfiguredAndTheOthersAreAbsent() throws Exception {
    Distribution.Result m = mount("--fence-agent", "exec", "--fence-command",
        "echo fencing \"$ETCFS_FENCE_NODE\"", "--fence-timeout", "45s");
    assertEquals(0, m.exit(), m.toString());
    String exec = shell("scr:info io.etcfs.fencing.internal.ExecFenceAgent");
    assertTrue(exec.contains("command<String> = echo fencing \"$ETCFS_FENCE_NODE\""), exec);
    assertTrue(exec.contains("fsName<String> = " + fs), exec);
    String membership = shell("scr:info io.etcfs.fencing.internal.NodeMembership");
    assertTrue(membership.contains("fenceAgent.target<String> = (etcfs.fence.agent=exec)"),
        membership);
    assertTrue(membership.contains("fenceTimeoutSeconds<Integer> = 45"), membership);
    String list = shell("scr:list");
    assertTrue(list.lines().anyMatch(l -> l.startsWith(
        "io.etcfs.fencing.internal.ReservationFenceAgent in bundle") && l.endsWith(
        "enabled, 0 instances.")), list);
    assertEquals(0, etcfs("umount", mp.toString()).exit());
  }

  /**
   * The front end is the one asked for, and only that one exists; where libfuse 3 is missing
   * (hidden here by naming a library file that does not exist) the node says so in one line and
   * mounts through libfuse 2. Either way the mount works.
   */
  @Test
  void theFrontEndIsTheOneAskedForAndLibfuse2StandsInForAMissingLibfuse3() throws Exception {
    Distribution.Result bad = mount("--frontend", "fast");
    assertRefused(bad, "etcfs: unknown front end 'fast' (lowlevel or highlevel)");

    assertEquals(0, mount().exit());
    assertFrontEnd("io.etcfs.fuse3.internal.Fuse3Frontend", "io.etcfs.fuse.internal.FuseFrontend");
    assertEquals(0, etcfs("umount", mp.toString()).exit());

    assertEquals(0, mount("--frontend", "highlevel").exit());
    assertFrontEnd("io.etcfs.fuse.internal.FuseFrontend", "io.etcfs.fuse3.internal.Fuse3Frontend");
    assertEquals(0, etcfs("umount", mp.toString()).exit());

    Path log = tmp.resolve("n1-fallback.log");
    Distribution.Result m = Distribution.etcfs(runtime, T,
        java.util.Map.of("ETCFS_NODE_JAVA_OPTS", "-Detcfs.libfuse3=/nonexistent/libfuse3.so.3"),
        "mount", image.toString(), mp.toString(), "--etcd", etcd, "--name", fs, "--node", "n1",
        "--state-dir", state.toString(), "--log", log.toString());
    assertEquals(0, m.exit(), m.toString());
    assertFrontEnd("io.etcfs.fuse.internal.FuseFrontend", "io.etcfs.fuse3.internal.Fuse3Frontend");
    assertTrue(Files.readString(log).contains("libfuse3.so.3 not found (install the libfuse3-3 "
        + "package): mounting through libfuse 2 (--frontend highlevel) instead"),
        Files.readString(log));
    Files.writeString(mp.resolve("works"), "yes");
    assertEquals("yes", Files.readString(mp.resolve("works")));
    assertEquals(0, etcfs("umount", mp.toString()).exit());
  }

  /** {@code active} is the one component instance; {@code absent} has none. */
  private void assertFrontEnd(String active, String absent) throws Exception {
    String list = shell("scr:list");
    assertTrue(list.lines().anyMatch(l -> l.startsWith(active + " in bundle")
        && l.endsWith("enabled, 1 instance.")), list);
    assertTrue(list.lines().anyMatch(l -> l.startsWith(absent + " in bundle")
        && l.endsWith("enabled, 0 instances.")), list);
  }

  private String shell(String command) throws Exception {
    Distribution.Result r = etcfs("shell", mp.toString(), "-c", command);
    assertEquals(0, r.exit(), r.toString());
    return r.out();
  }

  @Test
  void foregroundNodeLeavesCleanlyOnSigterm() throws Exception {
    ProcessBuilder pb = Distribution.command(runtime, java.util.Map.of(), "mount",
        image.toString(), mp.toString(), "--etcd", etcd, "--name", fs, "--node", "n1",
        "--state-dir", state.toString(), "--foreground");
    Path out = tmp.resolve("fg.out");
    pb.redirectErrorStream(true).redirectOutput(out.toFile())
        .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
    Process cli = pb.start();
    try {
      long deadline = System.nanoTime() + T.toNanos();
      Distribution.Result backend = null;
      while (System.nanoTime() < deadline && cli.isAlive()) {
        backend = etcfs("shell", mp.toString(), "-c", "etcfs:lock backend");
        if (backend.exit() == 0) {
          break;
        }
        Thread.sleep(200);
      }
      assertTrue(backend != null && backend.exit() == 0, "foreground node never became reachable: "
          + backend + "\n" + Files.readString(out));
      assertEquals("etcd\n", backend.out());
      long node = Processes.pid(state.resolve("n1.pid")).orElseThrow();
      assertTrue(etcfs("status", "--etcd", etcd, "--name", fs).out().contains("members     1"));

      cli.destroy();
      assertTrue(cli.waitFor(90, java.util.concurrent.TimeUnit.SECONDS), "CLI did not exit");
      assertFalse(Processes.alive(node), "the node JVM outlived its foreground CLI");
      assertTrue(etcfs("status", "--etcd", etcd, "--name", fs).out().contains("members     0"),
          "the node did not leave cleanly:\n" + Files.readString(out));
    } finally {
      cli.destroyForcibly();
    }
  }

  @Test
  void aKilledNodesMountIsClearedByUmountAndTheNextMountWorks() throws Exception {
    assertEquals(0, mount("--lease-ttl", "2s").exit());
    // fsync: close does not wait for the commit (durability is fsync's promise, DESIGN)
    try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(mp.resolve("kept"),
        java.nio.file.StandardOpenOption.CREATE_NEW, java.nio.file.StandardOpenOption.WRITE)) {
      ch.write(java.nio.ByteBuffer.wrap("committed before the kill".getBytes(
          java.nio.charset.StandardCharsets.UTF_8)));
      ch.force(true);
    }
    long pid = Processes.pid(state.resolve("n1.pid")).orElseThrow();
    ProcessHandle.of(pid).orElseThrow().destroyForcibly();
    ProcessHandle.of(pid).ifPresent(h -> h.onExit().join());

    Distribution.Result u = etcfs("umount", mp.toString());
    assertEquals(0, u.exit(), u.toString());
    assertTrue(u.out().contains("node n1 was not running"), u.toString());
    assertFalse(Files.readString(Path.of("/proc/self/mountinfo")).contains(" " + mp + " "),
        "the dead mount is still there");

    long deadline = System.nanoTime() + T.toNanos();
    Distribution.Result again = mount("--lease-ttl", "2s");
    while (again.exit() != 0 && again.err().contains("already a member")
        && System.nanoTime() < deadline) {
      Thread.sleep(250);
      again = mount("--lease-ttl", "2s");
    }
    assertEquals(0, again.exit(), again.toString());
    assertEquals("committed before the kill", Files.readString(mp.resolve("kept")));
    assertEquals(0, etcfs("umount", mp.toString()).exit());
  }

  @Test
  void aCorruptSuperblockIsRefused() throws Exception {
    try (var ch = java.nio.channels.FileChannel.open(image, java.nio.file.StandardOpenOption.WRITE)) {
      ch.write(java.nio.ByteBuffer.wrap(new byte[] {0x55}), 20);
    }
    assertRefused(mount(), "etcfs: device " + image + " holds no etcfs filesystem: corrupt etcfs"
        + " superblock (checksum mismatch)");
  }

  @Test
  void aTruncatedDeviceIsRefused() throws Exception {
    try (var ch = java.nio.channels.FileChannel.open(image, java.nio.file.StandardOpenOption.WRITE)) {
      ch.truncate(128L << 20);
    }
    assertRefused(mount(), "etcfs: device " + image + " is truncated: " + (128L << 20)
        + " bytes, its superblock says " + (256L << 20));
  }

  @Test
  void anUndecodableRecordIsRefused(EtcdCluster cluster) throws Exception {
    try (var store = cluster.newStore()) {
      store.commit(new io.etcfs.spi.meta.Txn().then(io.etcfs.spi.meta.Op.put(
          io.etcfs.spi.meta.Keys.of("/etcfs/" + fs + "/fs"), io.etcfs.spi.meta.Keys.of("garbage"))));
    }
    Distribution.Result r = mount();
    assertEquals(1, r.exit(), r.toString());
    assertEquals(1, r.errLines().size(), r.toString());
    assertTrue(r.err().startsWith("etcfs: filesystem '" + fs + "': corrupt filesystem record"),
        r.toString());
    assertNothingRunning();
  }

  @Test
  void formatRefusesAnExistingFilesystem() throws Exception {
    Distribution.Result r = etcfs("format", image.toString(), "--etcd", etcd, "--name", fs);
    assertRefused(r, "etcfs: device " + image + " already holds an etcfs filesystem"
        + " (use --force to overwrite it)");
  }

  @Test
  void formatRefusesATooSmallDevice() throws Exception {
    Path small = tmp.resolve("small.img");
    Distribution.Result r = etcfs("format", small.toString(), "--size", "2M", "--etcd", etcd,
        "--name", fs + "x");
    assertEquals(1, r.exit(), r.toString());
    assertTrue(r.errLines().get(0).startsWith("etcfs: device " + small + " is too small"), r.toString());
  }

  @Test
  void missingDevice() throws Exception {
    Distribution.Result r = etcfs("mount", tmp.resolve("nope.img").toString(), mp.toString(),
        "--etcd", etcd, "--name", fs, "--state-dir", state.toString());
    assertRefused(r, "etcfs: device " + tmp.resolve("nope.img") + " does not exist");
  }

  @Test
  void unreachableEtcd() throws Exception {
    Distribution.Result r = etcfs("mount", image.toString(), mp.toString(), "--etcd",
        "http://127.0.0.1:1", "--name", fs, "--state-dir", state.toString());
    assertEquals(1, r.exit(), r.toString());
    assertEquals(1, r.errLines().size(), r.toString());
    assertTrue(r.err().contains("127.0.0.1:1") && r.err().contains("not reachable"), r.toString());
    assertNothingRunning();
  }

  @Test
  void mountpointNotEmpty() throws Exception {
    Files.writeString(mp.resolve("file"), "x");
    assertRefused(mount(), "etcfs: mountpoint " + mp + " is not an empty directory");
  }

  @Test
  void stateDirNotWritable() throws Exception {
    Path file = Files.writeString(tmp.resolve("plainfile"), "x");
    Distribution.Result r = etcfs("mount", image.toString(), mp.toString(), "--etcd", etcd,
        "--name", fs, "--state-dir", file.resolve("sub").toString());
    assertEquals(1, r.exit(), r.toString());
    assertTrue(r.errLines().get(0).startsWith("etcfs: state directory " + file.resolve("sub")
        + " is not writable"), r.toString());
  }

  @Test
  void deviceOfAnotherFilesystem() throws Exception {
    Path other = tmp.resolve("other.img");
    assertEquals(0, etcfs("format", other.toString(), "--size", "256M", "--etcd", etcd,
        "--name", fs + "o").exit());
    Distribution.Result r = etcfs("mount", other.toString(), mp.toString(), "--etcd", etcd,
        "--name", fs, "--state-dir", state.toString());
    assertEquals(1, r.exit(), r.toString());
    assertTrue(r.errLines().get(0).contains("refusing to mount"), r.toString());
    assertNothingRunning();
  }

  @Test
  void lockBackendMustMatchTheFilesystem() throws Exception {
    Distribution.Result r = mount("--lock", "hazelcast");
    assertRefused(r, "etcfs: filesystem '" + fs + "' uses the lock backend 'etcd'; every node"
        + " must use the same one (got --lock hazelcast)");
  }

  /**
   * A component that fails in its constructor (here the FUSE front end, because something was
   * mounted on the mountpoint after the CLI checked it and before the node mounted) reaches SCR
   * wrapped in an InvocationTargetException: the user must read the front end's reason.
   */
  @Test
  void aComponentThatFailsToStartIsReportedByItsCause() throws Exception {
    ProcessBuilder pb = Distribution.command(runtime, java.util.Map.of(), "mount",
        image.toString(), mp.toString(), "--etcd", etcd, "--name", fs, "--node", "n1",
        "--state-dir", state.toString());
    Path out = tmp.resolve("mount.out");
    Path err = tmp.resolve("mount.err");
    pb.redirectOutput(out.toFile()).redirectError(err.toFile())
        .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
    Process cli = pb.start();
    try {
      // The node writes its pid file as its JVM starts, seconds before its bundles mount.
      long deadline = System.nanoTime() + T.toNanos();
      while (!Files.exists(state.resolve("n1.pid")) && cli.isAlive()
          && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      Sh.run("mount", "-t", "tmpfs", "-o", "size=1m", "in-the-way", mp.toString()).ok();
      assertTrue(cli.waitFor(T.toSeconds(), java.util.concurrent.TimeUnit.SECONDS));
      assertEquals(1, cli.exitValue(), Files.readString(out) + Files.readString(err));
      assertEquals(List.of("etcfs: node n1 failed to start: cannot mount etcfs at " + mp
          + ": already mounted (tmpfs "
          + "in-the-way); unmount it first, e.g. fusermount -uz " + mp),
          Files.readAllLines(err), Files.readString(err));
      assertNothingRunning();
    } finally {
      cli.destroyForcibly();
      Sh.run("umount", mp.toString());
    }
  }

  private void assertRefused(Distribution.Result r, String line) throws Exception {
    assertEquals(1, r.exit(), r.toString());
    assertEquals(line, r.errLines().get(0), r.toString());
    assertEquals(1, r.errLines().size(), r.toString());
    assertNothingRunning();
  }

  private void assertNothingRunning() throws Exception {
    assertFalse(Files.exists(state.resolve("n1.pid")), "a node pid file was left");
    try (var s = Files.list(runtime)) {
      assertTrue(s.noneMatch(p -> p.getFileName().toString().equals("mounts"))
          || isEmpty(runtime.resolve("mounts")), "a mount record was left");
    }
  }

  private static boolean isEmpty(Path dir) throws Exception {
    try (var s = Files.list(dir)) {
      return s.findAny().isEmpty();
    }
  }
}

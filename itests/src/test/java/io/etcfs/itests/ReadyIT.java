package io.etcfs.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.testing.EtcdCluster;
import io.etcfs.testing.EtcdExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * What "ready" means to {@code mount} and {@code up}: the node's bundles are whole, and a
 * {@code stat} of the mount root, as the CLI's caller sees it, reaches the etcfs mount. A node
 * whose mount the caller cannot reach — here a node put in a mount namespace of its own, so its
 * mount is real and its health is ready, but the mountpoint is still the empty directory under
 * it — is not ready: the command fails with one line and stops it.
 */
@Timeout(600)
@ExtendWith(EtcdExtension.class)
class ReadyIT {
  private static final Duration T = Duration.ofSeconds(240);
  @TempDir Path tmp;
  private Path runtime;

  @BeforeEach
  void dirs() throws Exception {
    runtime = Files.createDirectories(tmp.resolve("rt"));
  }

  @AfterEach
  void killLeftovers() throws Exception {
    Processes.killAll(tmp);
    try (Stream<Path> s = Files.walk(tmp, 4)) {
      s.filter(p -> p.getFileName().toString().startsWith("mnt")).forEach(
          LocalCluster::unmountQuietly);
    }
  }

  @Test
  void mountReturnsOnceTheMountRootStatsAsEtcfs(EtcdCluster etcd) throws Exception {
    Path image = format(etcd, "fs-ready");
    Path mp = Files.createDirectories(tmp.resolve("mnt"));
    Distribution.Result m = Distribution.etcfs(runtime, T, "mount", image.toString(),
        mp.toString(), "--etcd", etcd.endpoints(), "--name", "fs-ready", "--node", "n1",
        "--state-dir", tmp.resolve("state").toString());
    assertEquals(0, m.exit(), m.toString());
    // At once, with no polling: that is the promise.
    assertEquals(0, Sh.run("mountpoint", "-q", mp.toString()).exit(), "not a mountpoint");
    assertFalse(Sh.run("stat", "-c", "%d", mp.toString()).ok().out().equals(
        Sh.run("stat", "-c", "%d", tmp.toString()).ok().out()), "stat reached the directory");
    assertTrue(Files.readAllLines(Path.of("/proc/self/mountinfo")).stream().anyMatch(
        l -> l.contains(" " + mp + " ") && l.contains(" - fuse.etcfs ")), "not an etcfs mount");
    assertEquals(0, Distribution.etcfs(runtime, T, "umount", mp.toString()).exit());
  }

  @Test
  void mountFailsWhenTheNodesMountIsNotTheCallers(EtcdCluster etcd) throws Exception {
    Path image = format(etcd, "fs-hidden");
    Path mp = Files.createDirectories(tmp.resolve("mnt"));
    Path state = tmp.resolve("state");
    Distribution.Result m = Distribution.etcfs(runtime, T, hiddenMounts(), "mount",
        image.toString(), mp.toString(), "--etcd", etcd.endpoints(), "--name", "fs-hidden",
        "--node", "n1", "--state-dir", state.toString());
    assertEquals(1, m.exit(), "mount said the node was ready\n" + m);
    assertEquals(List.of("etcfs: node n1 does not serve " + mp + ": nothing is mounted at " + mp
        + " (see " + state.resolve("n1.log") + ")"), m.errLines(), m.toString());
    assertNothingLeft(state.resolve("n1.pid"), mp);
    Distribution.Result st = Distribution.etcfs(runtime, T, "status", "--etcd",
        etcd.endpoints(), "--name", "fs-hidden");
    assertTrue(st.out().contains("members     0"), "the node did not leave\n" + st);
  }

  @Test
  void upFailsWhenANodesMountIsNotTheCallers() throws Exception {
    Path dir = tmp.resolve("c");
    Distribution.Result up = Distribution.etcfs(runtime, T, hiddenMounts(), "up", "--nodes", "1",
        "--dir", dir.toString(), "--size", "1G");
    assertEquals(1, up.exit(), "up said the node was ready\n" + up);
    Path mp = dir.resolve("mnt/node1");
    assertEquals("etcfs: node node1 does not serve " + mp + ": nothing is mounted at " + mp
        + " (see " + dir.resolve("log/node1.log") + ")", up.errLines().get(0), up.toString());
    assertNothingLeft(dir.resolve("run/node1.pid"), mp);
    for (long pid : LocalEtcd.pids(dir)) {
      assertFalse(Processes.alive(pid), "up left its etcd running after failing");
    }
  }

  private Path format(EtcdCluster etcd, String fs) throws Exception {
    Path image = tmp.resolve(fs + ".img");
    Distribution.Result r = Distribution.etcfs(runtime, T, "format", image.toString(), "--size",
        "256M", "--etcd", etcd.endpoints(), "--name", fs);
    assertEquals(0, r.exit(), r.toString());
    return image;
  }

  private static void assertNothingLeft(Path pidFile, Path mp) throws Exception {
    assertFalse(Files.exists(pidFile), pidFile + " left behind");
    try (Stream<String> cmdlines = Files.list(Path.of("/proc"))
        .filter(p -> p.getFileName().toString().matches("[0-9]+"))
        .map(p -> {
          try {
            return Files.readString(p.resolve("cmdline")).replace('\0', ' ');
          } catch (Exception e) {
            return "";
          }
        })) {
      assertFalse(cmdlines.anyMatch(c -> c.contains("NodeMain") && c.contains(
          pidFile.getParent().toString() + "/")), "a node JVM of this test still runs");
    }
  }

  /**
   * An environment whose {@code setsid} (which the CLI starts every background node with) puts
   * the node in a mount namespace of its own: its FUSE mount exists, but only there.
   */
  private Map<String, String> hiddenMounts() throws Exception {
    Path bin = Files.createDirectories(tmp.resolve("bin"));
    Path setsid = bin.resolve("setsid");
    Files.writeString(setsid, "#!/bin/sh\nexec " + which("setsid") + " " + which("unshare")
        + " --mount --propagation private \"$@\"\n");
    Files.setPosixFilePermissions(setsid, PosixFilePermissions.fromString("rwxr-xr-x"));
    return Map.of("PATH", bin + ":" + System.getenv("PATH"));
  }

  private static String which(String tool) throws Exception {
    Sh.Out o = Sh.run("sh", "-c", "command -v " + tool).ok();
    return o.out().strip();
  }
}

package io.etcfs.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A whole local cluster driven as a user drives it: {@code up --nodes 2}, {@code status},
 * {@code shell -c}, {@code down} — real etcd, real node JVMs started from the tarball.
 */
@Timeout(600)
class ClusterIT {
  private static final Duration T = Duration.ofSeconds(240);
  @TempDir Path tmp;

  @AfterEach
  void killLeftovers() throws Exception {
    Processes.killAll(tmp);
    Path mnt = tmp.resolve("c/mnt");
    if (Files.isDirectory(mnt)) {
      try (var s = Files.list(mnt)) {
        s.forEach(LocalCluster::unmountQuietly);
      }
    }
  }

  /**
   * The README's way back into a cluster: umount node1, then mount the device again at node1's
   * mountpoint with cluster.env's settings. That node is not one of up's, yet it serves one of
   * the cluster's mountpoints: down must stop it (through the mount record of the mountpoint)
   * while etcd still runs, and must not mistake its live mount for node1's dead one.
   */
  @Test
  void downStopsANodeMountedByHandOnAClusterMountpoint() throws Exception {
    Path runtime = Files.createDirectories(tmp.resolve("rt"));
    Path dir = tmp.resolve("c");
    Path mp = dir.resolve("mnt/node1");
    Distribution.Result up = Distribution.etcfs(runtime, T, "up", "--nodes", "2", "--dir",
        dir.toString(), "--size", "1G");
    assertEquals(0, up.exit(), up.toString());
    long node2 = Processes.pid(dir.resolve("run/node2.pid")).orElseThrow();

    Distribution.Result umount = Distribution.etcfs(runtime, T, "umount", mp.toString());
    assertEquals(0, umount.exit(), umount.toString());
    java.util.Map<String, String> env = clusterEnv(dir);
    Distribution.Result mount = Distribution.etcfs(runtime, T, "mount", env.get("ETCFS_DEVICE"),
        mp.toString(), "--etcd", env.get("ETCFS_ETCD"));
    assertEquals(0, mount.exit(), mount.toString());
    java.util.regex.Matcher m = java.util.regex.Pattern
        .compile("node (\\S+) joined 'etcfs' \\(pid (\\d+)\\)").matcher(mount.out());
    assertTrue(m.find(), mount.toString());
    String name = m.group(1);
    long fresh = Long.parseLong(m.group(2));
    Path log = runtime.resolve("etcfs-" + name).resolve(name + ".log");
    assertTrue(Processes.alive(fresh));
    Files.writeString(mp.resolve("written-after-remount"), "x");

    Distribution.Result down = Distribution.etcfs(runtime, T, "down", "--dir", dir.toString());
    assertEquals(0, down.exit(), down.toString());
    assertFalse(Processes.alive(fresh), "the remounted node still runs after down\n" + down);
    assertFalse(Processes.alive(node2), "node2 still runs after down\n" + down);
    assertFalse(Files.readString(Path.of("/proc/self/mountinfo")).contains(" " + mp + " "),
        mp + " is still mounted after down\n" + down);
    assertFalse(down.out().contains("detached"), "down detached a live node's mount\n" + down);
    List<String> lines = down.out().lines().toList();
    int nodeLine = indexOf(lines, name + " (" + mp + "): left the cluster cleanly");
    int etcdLine = indexOf(lines, "etcd: stopped");
    assertTrue(nodeLine >= 0 && etcdLine > nodeLine, "the remounted node must leave before etcd "
        + "stops\n" + down);
    // Its membership was deleted in etcd: the clean leave reached a running etcd.
    assertTrue(Files.readString(log).contains(name + " left etcfs (generation"),
        "no clean leave in " + log + "\n" + Files.readString(log));
    for (long pid : LocalEtcd.pids(dir)) {
      assertFalse(Processes.alive(pid), "etcd pid " + pid + " still running after down");
    }
    Distribution.Result again = Distribution.etcfs(runtime, T, "umount", mp.toString());
    assertEquals(1, again.exit(), "down left a mount record for " + mp + "\n" + again);
  }

  private static int indexOf(List<String> lines, String start) {
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).startsWith(start)) {
        return i;
      }
    }
    return -1;
  }

  /** cluster.env as a shell that sources it would see it. */
  private static java.util.Map<String, String> clusterEnv(Path dir) throws Exception {
    java.util.Map<String, String> env = new java.util.HashMap<>();
    for (String line : Files.readAllLines(dir.resolve("cluster.env"))) {
      int eq = line.indexOf('=');
      env.put(line.substring(0, eq), line.substring(eq + 1).replaceAll("^'|'$", ""));
    }
    return env;
  }

  @Test
  void upStatusShellDown() throws Exception {
    Path runtime = Files.createDirectories(tmp.resolve("rt"));
    Path dir = tmp.resolve("c");
    Distribution.Result up = Distribution.etcfs(runtime, T, "up", "--nodes", "2", "--dir",
        dir.toString(), "--size", "1G");
    assertEquals(0, up.exit(), up.toString());
    assertTrue(up.out().contains("node1 ready") && up.out().contains("node2 ready"), up.toString());

    String env = Files.readString(dir.resolve("cluster.env"));
    assertTrue(env.contains("ETCFS_ETCD='http://127.0.0.1:"), env);
    assertTrue(env.contains("ETCFS_DEVICE='" + dir.resolve("device.img") + "'"), env);
    List<Long> pids = new ArrayList<>();
    for (String n : List.of("node1", "node2")) {
      long pid = Processes.pid(dir.resolve("run/" + n + ".pid")).orElseThrow();
      assertTrue(Processes.alive(pid), n + " not running");
      assertTrue(Files.isDirectory(dir.resolve("mnt/" + n)));
      assertTrue(Files.size(dir.resolve("log/" + n + ".log")) > 0, n + " has no log");
      pids.add(pid);
    }

    Distribution.Result status = Distribution.etcfs(runtime, T, "status", "--dir", dir.toString());
    assertEquals(0, status.exit(), status.toString());
    assertTrue(status.out().contains("members     2"), status.toString());
    assertTrue(status.out().contains("node1") && status.out().contains("node2"), status.toString());
    assertTrue(status.out().contains("lock=etcd  alloc=arena"), status.toString());

    Distribution.Result lb = Distribution.etcfs(runtime, T, "shell",
        dir.resolve("mnt/node1").toString(), "-c", "lb -s");
    assertEquals(0, lb.exit(), lb.toString());
    assertTrue(lb.out().contains("io.etcfs.etcfs-core"), lb.toString());
    assertTrue(lb.out().contains("io.etcfs.etcfs-api"), lb.toString());
    // Every bundle active but Hazelcast's: the lock backend is etcd, so they are not started.
    assertFalse(lb.out().lines().filter(l -> !l.contains("hazelcast"))
        .anyMatch(l -> l.contains("Installed") || l.contains("Resolved")), lb.toString());

    Distribution.Result bad = Distribution.etcfs(runtime, T, "shell",
        dir.resolve("mnt/node1").toString(), "-c", "nosuchcommand");
    assertEquals(1, bad.exit(), bad.toString());
    assertTrue(bad.out().contains("nosuchcommand"), bad.toString());

    Distribution.Result lines = Distribution.etcfsWithInput(runtime, T,
        "etcfs:lock backend\n\netcfs:alloc backend\nexit\nlb\n", "shell",
        dir.resolve("mnt/node2").toString());
    assertEquals(0, lines.exit(), lines.toString());
    assertEquals("etcd\narena\n", lines.out(), "one answer per line, nothing after exit");

    Distribution.Result down = Distribution.etcfs(runtime, T, "down", "--dir", dir.toString());
    assertEquals(0, down.exit(), down.toString());
    assertTrue(down.out().contains("node1: left the cluster cleanly"), down.toString());
    for (long pid : pids) {
      assertFalse(Processes.alive(pid), "node pid " + pid + " still running after down");
    }
    assertFalse(Files.exists(dir.resolve("run/node1.pid")));
    assertFalse(Files.exists(dir.resolve("run/node1.sock")));
    for (long pid : LocalEtcd.pids(dir)) {
      assertFalse(Processes.alive(pid), "etcd pid " + pid + " still running after down");
    }
  }
}

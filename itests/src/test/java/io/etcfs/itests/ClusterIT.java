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
    assertFalse(lb.out().contains("Installed") || lb.out().contains("Resolved"), lb.toString());

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

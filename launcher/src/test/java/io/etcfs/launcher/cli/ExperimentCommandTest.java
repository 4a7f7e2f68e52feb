package io.etcfs.launcher.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code etcfs experiment} refuses bad input before any cluster starts: one line naming the
 * problem (and where help is), status 2, nothing written.
 */
@Timeout(30)
class ExperimentCommandTest {
  @TempDir Path tmp;
  private String home;

  @BeforeEach
  void installation() throws Exception {
    home = System.getProperty("etcfs.home");
    Path bundles = Files.createDirectories(tmp.resolve("home/bundle"));
    // hazelcast is known but not installed here
    for (String jar : List.of("lock-etcd", "alloc-arena", "alloc-shared")) {
      Files.createFile(bundles.resolve(jar + ".jar"));
    }
    System.setProperty("etcfs.home", tmp.resolve("home").toString());
  }

  @AfterEach
  void restore() {
    if (home == null) {
      System.clearProperty("etcfs.home");
    } else {
      System.setProperty("etcfs.home", home);
    }
  }

  /** Runs etcfs with {@code args}; returns status and standard error. */
  private static Object[] run(String... args) {
    PrintStream saved = System.err;
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
    try {
      int status = Main.run(args);
      return new Object[] {status, err.toString(StandardCharsets.UTF_8)};
    } finally {
      System.setErr(saved);
    }
  }

  private void refused(String expected, String... args) {
    Object[] r = run(args);
    assertEquals(2, r[0], (String) r[1]);
    List<String> lines = ((String) r[1]).lines().toList();
    assertEquals(List.of("etcfs: " + expected, "Try 'etcfs experiment --help'."), lines);
    assertFalse(Files.exists(tmp.resolve("out")), "something was written");
  }

  private Path spec(String text) throws Exception {
    return Files.writeString(tmp.resolve("x.spec"), text);
  }

  @Test
  void aMissingSpecFile() {
    Path none = tmp.resolve("none.spec");
    refused("spec " + none + ": no such file", "experiment", none.toString(), "--out",
        tmp.resolve("out").toString());
  }

  @Test
  void anUnknownWorkload() throws Exception {
    Path s = spec("workload = fsync-storm\nstrategies = etcd/arena\n");
    refused(s + ":1: unknown workload 'fsync-storm' (handoff, shared-writers, shared-creates,"
        + " node-kill, mixed)", "experiment", s.toString(), "--out", tmp.resolve("out").toString());
  }

  @Test
  void aMalformedLine() throws Exception {
    Path s = spec("workload = handoff\nstrategies: etcd/arena\n");
    refused(s + ":2: 'strategies: etcd/arena' is not 'key = value'", "experiment", s.toString(),
        "--out", tmp.resolve("out").toString());
  }

  @Test
  void anUnknownBackend() throws Exception {
    Path s = spec("workload = handoff\nstrategies = etcd/arena raft/arena\n");
    refused(s + ": raft/arena: unknown lock backend 'raft' (etcd or hazelcast)", "experiment",
        s.toString(), "--out", tmp.resolve("out").toString());
  }

  @Test
  void aBackendThatIsNotInstalled() throws Exception {
    Path s = spec("workload = handoff\nstrategies = etcd/arena hazelcast/arena\n");
    refused(s + ": hazelcast/arena: lock backend 'hazelcast' is not installed: "
        + tmp.resolve("home/bundle/lock-hazelcast.jar") + " is missing", "experiment",
        s.toString(), "--out", tmp.resolve("out").toString());
  }

  @Test
  void anUnknownAllocator() throws Exception {
    Path s = spec("workload = handoff\nstrategies = etcd/bitmap\n");
    refused(s + ": etcd/bitmap: unknown allocator 'bitmap' (arena or shared)", "experiment",
        s.toString(), "--out", tmp.resolve("out").toString());
  }

  @Test
  void runsBelowOne() throws Exception {
    Path s = spec("workload = handoff\nstrategies = etcd/arena\n");
    refused("--runs must be 1 at least", "experiment", s.toString(), "--runs", "0", "--out",
        tmp.resolve("out").toString());
  }

  @Test
  void anExistingClusterWithoutEtcdOrMounts() throws Exception {
    Path s = spec("workload = handoff\nstrategies = etcd/arena\n");
    refused("--mounts, --device and --name are for an existing cluster: give --etcd URLS too",
        "experiment", s.toString(), "--mounts", tmp.toString(), "--out",
        tmp.resolve("out").toString());
    refused("an existing cluster needs --mounts: the mountpoints of the nodes to drive",
        "experiment", s.toString(), "--etcd", "http://127.0.0.1:1", "--out",
        tmp.resolve("out").toString());
    refused(tmp + " is not an etcfs mount", "experiment", s.toString(), "--etcd",
        "http://127.0.0.1:1", "--mounts", tmp.toString(), "--out", tmp.resolve("out").toString());
  }
}

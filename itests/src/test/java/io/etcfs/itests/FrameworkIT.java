package io.etcfs.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.core.format.Formatter;
import io.etcfs.launcher.node.Configs;
import io.etcfs.launcher.node.EtcdConnection;
import io.etcfs.launcher.node.GogoExec;
import io.etcfs.launcher.node.Health;
import io.etcfs.launcher.node.NodeConfigs;
import io.etcfs.launcher.node.NodeRuntime;
import io.etcfs.launcher.node.NodeSpec;
import io.etcfs.testing.EtcdCluster;
import io.etcfs.testing.EtcdExtension;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Hashtable;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.osgi.framework.Bundle;

/**
 * Felix with exactly the bundles the tarball ships: every bundle ACTIVE but those of the lock
 * backend not selected, every component satisfied, and the lock backend swapped (its bundles
 * started, then the configuration changed) without reactivating the core. A
 * missing import or an unresolved service fails here, not on the first user's machine.
 */
@Timeout(300)
@ExtendWith(EtcdExtension.class)
class FrameworkIT {
  private static final Set<String> BUNDLES = Set.of("io.etcfs.etcfs-core", "io.etcfs.etcd-client",
      "io.etcfs.lock-etcd", "io.etcfs.lock-hazelcast", "io.etcfs.alloc-arena", "io.etcfs.fencing",
      "io.etcfs.fuse-frontend", "io.etcfs.shell");

  @TempDir Path tmp;

  @Test
  void everyBundleActiveEveryComponentSatisfiedAndTheLockBackendSwapsLive(EtcdCluster etcd)
      throws Exception {
    Path image = tmp.resolve("dev.img");
    try (var store = etcd.newStore()) {
      new Formatter(store, s -> { }).format(
          new Formatter.Options(image, 256L << 20, "fwtest", false, Formatter.DEFAULT_ARENA_SIZE));
    }
    NodeSpec spec = new NodeSpec("fwtest", "fw1", image, Files.createDirectories(tmp.resolve("mnt")),
        tmp.resolve("state"), tmp.resolve("state/fw1.log"), EtcdConnection.of(etcd.endpoints()), 10,
        "etcd");
    try (NodeRuntime rt = NodeRuntime.start(spec, Distribution.bundleDir(), false)) {
      Health.Report report = awaitWhole(rt);
      assertEquals(java.util.List.of(), report.problems());
      Set<String> names = java.util.Arrays.stream(rt.context().getBundles())
          .map(Bundle::getSymbolicName).collect(Collectors.toSet());
      assertTrue(names.containsAll(BUNDLES), "missing etcfs bundles: " + names);
      assertEquals("etcd", gogo(rt, "etcfs:lock backend"));
      assertEquals("arena", gogo(rt, "etcfs:alloc backend"));
      long coreId = coreComponent(report).id();

      // The configuration selects etcd: Hazelcast's bundles are installed but not started,
      // and a switch starts them first.
      assertTrue(java.util.Arrays.stream(rt.context().getBundles())
          .filter(b -> b.getSymbolicName().contains("hazelcast"))
          .allMatch(b -> b.getState() != Bundle.ACTIVE), "Hazelcast started unselected");
      rt.startBackend("hazelcast");
      Hashtable<String, Object> core = NodeConfigs.of(spec).get("io.etcfs.core");
      core.put("lockService.target", "(etcfs.backend=hazelcast)");
      Configs.update(rt.context(), "io.etcfs.core", core);
      long deadline = System.nanoTime() + 60_000_000_000L;
      while (!gogo(rt, "etcfs:lock backend").equals("hazelcast") && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
      assertEquals("hazelcast", gogo(rt, "etcfs:lock backend"));
      Health.Report after = Health.check(rt.context());
      assertEquals(coreId, coreComponent(after).id(), "the core was reactivated by the swap");
      assertEquals(java.util.List.of(), after.problems());
    }
  }

  private static Health.Component coreComponent(Health.Report r) {
    return r.components().stream()
        .filter(c -> c.name().equals("io.etcfs.core.internal.FileSystemCore"))
        .findFirst().orElseThrow();
  }

  private static Health.Report awaitWhole(NodeRuntime rt) throws InterruptedException {
    long deadline = System.nanoTime() + 120_000_000_000L;
    Health.Report r = Health.check(rt.context());
    while (!r.ready() && !r.failed() && System.nanoTime() < deadline) {
      Thread.sleep(50);
      r = Health.check(rt.context());
    }
    return r;
  }

  private static String gogo(NodeRuntime rt, String command) {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    int status = GogoExec.execute(rt.context(), command,
        new PrintStream(buf, true, StandardCharsets.UTF_8));
    String out = buf.toString(StandardCharsets.UTF_8).strip();
    assertEquals(0, status, command + ": " + out);
    return out;
  }
}

package io.etcfs.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
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
import java.io.InputStream;
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
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleEvent;
import org.osgi.framework.BundleListener;
import org.osgi.framework.ServiceReference;
import org.osgi.framework.wiring.FrameworkWiring;

/**
 * Felix with exactly the bundles the tarball ships: every bundle ACTIVE but those of the lock
 * backend not selected, every component satisfied, and the lock backend swapped (its bundles
 * started, then the configuration changed) without reactivating the core. A
 * missing import or an unresolved service fails here, not on the first user's machine.
 */
@Timeout(300)
@ExtendWith(EtcdExtension.class)
class FrameworkIT {
  private static final Set<String> BUNDLES = Set.of("io.etcfs.etcfs-api", "io.etcfs.etcfs-core",
      "io.etcfs.etcd-client",
      "io.etcfs.lock-etcd", "io.etcfs.lock-hazelcast", "io.etcfs.alloc-arena", "io.etcfs.fencing",
      "io.etcfs.fuse-frontend", "io.etcfs.shell");

  @TempDir Path tmp;

  @Test
  void everyBundleActiveEveryComponentSatisfiedAndTheLockBackendSwapsLive(EtcdCluster etcd)
      throws Exception {
    NodeSpec spec = formatted(etcd, "fwtest", "fw1");
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
      // Only the selected backend is configured; a switch configures the other first.
      Configs.update(rt.context(), NodeConfigs.LOCK_HAZELCAST, NodeConfigs.of(
          spec.withLockBackend("hazelcast")).get(NodeConfigs.LOCK_HAZELCAST));
      // The Hazelcast service is a delayed component: its member starts (seconds) when a consumer
      // first gets it. Were the core retargeted first, that start would run inside the core's
      // rebind, and SCR may give up on it and deactivate the core until it is done (a switch
      // warms the new backend up first; so does this test).
      ServiceReference<?> hz = awaitService(rt.context(), "io.etcfs.spi.lock.LockService",
          "(etcfs.backend=hazelcast)");
      assertNotNull(rt.context().getService(hz), "the Hazelcast lock service did not activate");
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

  /**
   * The API bundle holds the contract and nothing else, so updating an implementation restarts
   * only that bundle and the bundles wired to it: updating alloc-arena, and then the core, leaves
   * the API bundle running and the fencing component active, with this node's membership (its
   * generation: the create revision of its member key) untouched — before the split, the core
   * exported the SPI, and updating it restarted every plug-in, fencing included, whose
   * deactivation is the node's clean leave.
   */
  @Test
  void updatingAPlugInOrTheCoreRestartsOnlyThatBundle(EtcdCluster etcd) throws Exception {
    NodeSpec spec = formatted(etcd, "uptest", "up1");
    try (NodeRuntime rt = NodeRuntime.start(spec, Distribution.bundleDir(), false)) {
      BundleContext ctx = rt.context();
      assertEquals(java.util.List.of(), awaitWhole(rt).problems());
      long membership = component(Health.check(ctx), MEMBERSHIP).id();
      long generation = generation(ctx);
      Bundle api = bundle(ctx, "io.etcfs.etcfs-api");
      long apiModified = api.getLastModified();

      for (String updated : java.util.List.of("alloc-arena", "etcfs-core")) {
        String name = "io.etcfs." + updated;
        Set<String> stopped = java.util.concurrent.ConcurrentHashMap.newKeySet();
        BundleListener listener = e -> {
          if (e.getType() == BundleEvent.STOPPED) {
            stopped.add(e.getBundle().getSymbolicName());
          }
        };
        ctx.addBundleListener(listener);
        try {
          Bundle b = bundle(ctx, name);
          try (InputStream in = Files.newInputStream(
              Distribution.bundleDir().resolve(updated + ".jar"))) {
            b.update(in);
          }
          refresh(ctx, b);
          Health.Report after = awaitWhole(rt);
          assertEquals(java.util.List.of(), after.problems(), "after updating " + updated);
          assertEquals(Set.of(name), stopped, "bundles stopped by the update of " + updated);
        } finally {
          ctx.removeBundleListener(listener);
        }
        assertEquals(Bundle.ACTIVE, api.getState());
        assertEquals(apiModified, api.getLastModified(), "the API bundle was updated");
        assertEquals(membership, component(Health.check(ctx), MEMBERSHIP).id(),
            "the membership component was reactivated by the update of " + updated);
        assertEquals(generation, generation(ctx), "the node left and rejoined");
      }
    }
  }

  /** Formats a 256 MiB image as {@code fs} and returns the spec of node {@code node} on it. */
  private NodeSpec formatted(EtcdCluster etcd, String fs, String node) throws Exception {
    Path image = tmp.resolve("dev.img");
    try (var store = etcd.newStore()) {
      new Formatter(store, s -> { }).format(
          new Formatter.Options(image, 256L << 20, fs, false, Formatter.DEFAULT_ARENA_SIZE));
    }
    return new NodeSpec(fs, node, image, Files.createDirectories(tmp.resolve("mnt")),
        tmp.resolve("state"), tmp.resolve("state/" + node + ".log"),
        EtcdConnection.of(etcd.endpoints()), 10, "etcd").withAllocBackend("arena");
  }

  private static final String MEMBERSHIP = "io.etcfs.fencing.internal.NodeMembership";

  private static Bundle bundle(BundleContext ctx, String symbolicName) {
    return java.util.Arrays.stream(ctx.getBundles())
        .filter(b -> symbolicName.equals(b.getSymbolicName())).findFirst().orElseThrow();
  }

  /** Refreshes {@code b}'s wiring (which stops and starts it and its dependants) and waits. */
  private static void refresh(BundleContext ctx, Bundle b) throws InterruptedException {
    java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
    ctx.getBundle(0).adapt(FrameworkWiring.class)
        .refreshBundles(java.util.List.of(b), e -> done.countDown());
    assertTrue(done.await(60, java.util.concurrent.TimeUnit.SECONDS), "refresh of " + b);
  }

  /**
   * The node's membership generation, read from the Membership service. Its class space is the
   * framework's, not this test's (whose class path holds the API too): all references, unfiltered.
   */
  private static long generation(BundleContext ctx) throws Exception {
    ServiceReference<?>[] refs = ctx.getAllServiceReferences("io.etcfs.spi.fencing.Membership",
        null);
    assertTrue(refs != null && refs.length == 1, "one Membership service");
    ServiceReference<?> ref = refs[0];
    Object m = ctx.getService(ref);
    try {
      return (Long) m.getClass().getMethod("generation").invoke(m);
    } finally {
      ctx.ungetService(ref);
    }
  }

  private static Health.Component component(Health.Report r, String name) {
    return r.components().stream().filter(c -> c.name().equals(name)).findFirst().orElseThrow();
  }

  private static ServiceReference<?> awaitService(BundleContext ctx, String type, String filter)
      throws Exception {
    long deadline = System.nanoTime() + 120_000_000_000L;
    ServiceReference<?>[] refs = ctx.getAllServiceReferences(type, filter);
    while (refs == null && System.nanoTime() < deadline) {
      Thread.sleep(50);
      refs = ctx.getAllServiceReferences(type, filter);
    }
    assertNotNull(refs, "no " + type + " " + filter + " within 120 s");
    return refs[0];
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

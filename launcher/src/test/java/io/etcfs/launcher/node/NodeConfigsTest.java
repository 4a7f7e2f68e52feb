package io.etcfs.launcher.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Hashtable;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The fence settings from the command line to the node spec file and Configuration Admin. */
@Timeout(10)
class NodeConfigsTest {
  @TempDir Path tmp;

  private NodeSpec spec(FenceSpec fence) {
    return new NodeSpec("prod", "n1", Path.of("/dev/sdb"), tmp.resolve("mnt"), tmp,
        tmp.resolve("n1.log"), EtcdConnection.of("http://127.0.0.1:2379"), 10, "etcd", fence);
  }

  @Test
  void exactlyTheChosenFrontEndIsConfigured() {
    Map<String, Hashtable<String, Object>> low = NodeConfigs.of(spec(FenceSpec.NONE));
    assertEquals(Map.of("fsName", "prod", "mountpoint", tmp.resolve("mnt").toString()),
        Map.copyOf(low.get(NodeConfigs.FUSE_LOWLEVEL)));
    assertFalse(low.containsKey(NodeConfigs.FUSE_HIGHLEVEL));
    Map<String, Hashtable<String, Object>> high =
        NodeConfigs.of(spec(FenceSpec.NONE).withFrontend(NodeSpec.HIGHLEVEL));
    assertEquals(Map.of("fsName", "prod", "mountpoint", tmp.resolve("mnt").toString()),
        Map.copyOf(high.get(NodeConfigs.FUSE_HIGHLEVEL)));
    assertFalse(high.containsKey(NodeConfigs.FUSE_LOWLEVEL));
  }

  /** The chosen front end is never optional: a node is not ready before its mount. */
  @Test
  void onlyTheFrontEndNotChosenMayBeAbsent() {
    assertEquals(java.util.Set.of(NodeConfigs.EXEC_AGENT, NodeConfigs.RESERVATION_AGENT,
        NodeConfigs.METRICS, NodeConfigs.LOCK_ETCD, NodeConfigs.LOCK_HAZELCAST, NodeConfigs.ALLOC_ARENA,
        NodeConfigs.ALLOC_SHARED, NodeConfigs.FUSE_HIGHLEVEL),
        NodeConfigs.selectedOnly(NodeSpec.LOWLEVEL));
    assertEquals(NodeConfigs.selectedOnly(NodeSpec.LOWLEVEL), NodeConfigs.selectedOnly(null));
    assertEquals(java.util.Set.of(NodeConfigs.EXEC_AGENT, NodeConfigs.RESERVATION_AGENT,
        NodeConfigs.METRICS, NodeConfigs.LOCK_ETCD, NodeConfigs.LOCK_HAZELCAST, NodeConfigs.ALLOC_ARENA,
        NodeConfigs.ALLOC_SHARED, NodeConfigs.FUSE_LOWLEVEL),
        NodeConfigs.selectedOnly(NodeSpec.HIGHLEVEL));
  }

  /**
   * The metrics endpoint is configured only with --metrics, before the front end (a required
   * one that cannot bind fails the start before the mount), and recorded in the member record.
   */
  @Test
  void metricsAreConfiguredOnlyWhenAskedFor() throws Exception {
    Map<String, Hashtable<String, Object>> none = NodeConfigs.of(spec(FenceSpec.NONE));
    assertFalse(none.containsKey(NodeConfigs.METRICS));
    assertFalse(none.get("io.etcfs.fencing").containsKey("metrics"));
    NodeSpec s = spec(FenceSpec.NONE).withMetrics(new NodeSpec.Metrics("127.0.0.1:9567", false));
    Map<String, Hashtable<String, Object>> on = NodeConfigs.of(s);
    assertEquals(Map.of("address", "127.0.0.1:9567"), Map.copyOf(on.get(NodeConfigs.METRICS)));
    assertEquals("127.0.0.1:9567", on.get("io.etcfs.fencing").get("metrics"));
    java.util.List<String> order = java.util.List.copyOf(on.keySet());
    assertTrue(order.indexOf(NodeConfigs.METRICS) < order.indexOf(NodeConfigs.FUSE_LOWLEVEL),
        order.toString());
    Map<String, Hashtable<String, Object>> required = NodeConfigs.of(spec(FenceSpec.NONE)
        .withMetrics(new NodeSpec.Metrics("127.0.0.1:9567", true)));
    assertEquals(true, required.get(NodeConfigs.METRICS).get("required"));
    // the default (not required) may also be changed by a component setting
    Map<String, Hashtable<String, Object>> set = NodeConfigs.withSettings(NodeConfigs.of(s),
        "io.etcfs.metrics.required=true");
    assertEquals("true", set.get(NodeConfigs.METRICS).get("required"));
    s.write();
    assertEquals(s.metrics(), NodeSpec.read(s.specFile()).metrics());
  }

  @Test
  void aRequiredMetricsAddressInUseIsRefusedBeforeTheStart() throws Exception {
    try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1,
        java.net.InetAddress.getLoopbackAddress())) {
      String address = "127.0.0.1:" + taken.getLocalPort();
      new NodeSpec.Metrics(address, false).checkBindable(); // not required: not checked
      io.etcfs.launcher.UserError e = assertThrows(io.etcfs.launcher.UserError.class,
          () -> new NodeSpec.Metrics(address, true).checkBindable());
      assertTrue(e.getMessage().startsWith("metrics address " + address + " cannot be bound: "),
          e.getMessage());
    }
  }

  /** Only the chosen lock backend is configured: the other starts nothing. */
  @Test
  void onlyTheChosenLockBackendIsConfigured() {
    Map<String, Hashtable<String, Object>> etcd = NodeConfigs.of(spec(FenceSpec.NONE));
    assertTrue(etcd.containsKey(NodeConfigs.LOCK_ETCD));
    assertFalse(etcd.containsKey(NodeConfigs.LOCK_HAZELCAST));
    Map<String, Hashtable<String, Object>> hz =
        NodeConfigs.of(spec(FenceSpec.NONE).withLockBackend("hazelcast"));
    assertEquals(Map.of("fsName", "prod", "nodeName", "n1"),
        Map.copyOf(hz.get(NodeConfigs.LOCK_HAZELCAST)));
    assertFalse(hz.containsKey(NodeConfigs.LOCK_ETCD));
    assertEquals("(etcfs.backend=hazelcast)", hz.get("io.etcfs.core").get("lockService.target"));
  }

  /** The allocator likewise; unresolved (the record decides), both are, for the first pass. */
  @Test
  void onlyTheChosenAllocatorIsConfigured() {
    Map<String, Hashtable<String, Object>> shared =
        NodeConfigs.of(spec(FenceSpec.NONE).withAllocBackend("shared"));
    assertTrue(shared.containsKey(NodeConfigs.ALLOC_SHARED));
    assertFalse(shared.containsKey(NodeConfigs.ALLOC_ARENA));
    assertEquals("(etcfs.backend=shared)", shared.get("io.etcfs.core").get("allocator.target"));
    Map<String, Hashtable<String, Object>> unresolved = NodeConfigs.of(spec(FenceSpec.NONE));
    assertTrue(unresolved.containsKey(NodeConfigs.ALLOC_SHARED)
        && unresolved.containsKey(NodeConfigs.ALLOC_ARENA));
  }

  @Test
  void aMissingLibfuse3FallsBackToTheHighLevelFrontEnd() {
    String before = System.getProperty(Frontends.LIBRARY_PROPERTY);
    try {
      System.setProperty(Frontends.LIBRARY_PROPERTY, tmp.resolve("no-libfuse3.so.3").toString());
      assertEquals(NodeSpec.HIGHLEVEL, Frontends.resolve(spec(FenceSpec.NONE)).frontend());
      assertEquals(NodeSpec.HIGHLEVEL, Frontends.resolve(
          spec(FenceSpec.NONE).withFrontend(NodeSpec.HIGHLEVEL)).frontend());
    } finally {
      if (before == null) {
        System.clearProperty(Frontends.LIBRARY_PROPERTY);
      } else {
        System.setProperty(Frontends.LIBRARY_PROPERTY, before);
      }
    }
  }

  @Test
  void theSpecFileCarriesTheFrontEnd() throws Exception {
    NodeSpec s = spec(FenceSpec.NONE).withFrontend(NodeSpec.HIGHLEVEL);
    s.write();
    assertEquals(NodeSpec.HIGHLEVEL, NodeSpec.read(s.specFile()).frontend());
  }

  @Test
  void noneSelectsTheNoneAgentAndConfiguresNoOther() {
    Map<String, Hashtable<String, Object>> c = NodeConfigs.of(spec(FenceSpec.NONE));
    assertEquals("(etcfs.fence.agent=none)", c.get("io.etcfs.fencing").get("fenceAgent.target"));
    assertEquals(30, c.get("io.etcfs.fencing").get("fenceTimeoutSeconds"));
    assertFalse(c.containsKey("io.etcfs.fence.exec"));
    assertFalse(c.containsKey("io.etcfs.fence.reservation"));
  }

  @Test
  void componentSettingsComeFromTheEnvironmentsList() {
    Map<String, Hashtable<String, Object>> c = NodeConfigs.withSettings(
        NodeConfigs.of(spec(FenceSpec.NONE)),
        " io.etcfs.lock.etcd.cleanReleaseMillis=30000, io.etcfs.alloc.arena.idleReleaseSeconds=5,");
    assertEquals("30000", c.get("io.etcfs.lock.etcd").get("cleanReleaseMillis"));
    assertEquals("5", c.get("io.etcfs.alloc.arena").get("idleReleaseSeconds"));
    assertEquals("prod", c.get("io.etcfs.lock.etcd").get("fsName"));
    assertSame(c, NodeConfigs.withSettings(c, null));
  }

  /**
   * A setting for a backend the node does not run now is accepted and left to a live switch
   * that starts it (the core reads the same variable then): the Hazelcast member's address on
   * a node of a cluster that runs on etcd today.
   */
  @Test
  void aSettingForABackendNotRunningIsKeptForASwitch() {
    Map<String, Hashtable<String, Object>> c = NodeConfigs.withSettings(
        NodeConfigs.of(spec(FenceSpec.NONE)), "io.etcfs.lock.hazelcast.address=10.0.0.5");
    assertFalse(c.containsKey("io.etcfs.lock.hazelcast"), c.keySet().toString());
  }

  @Test
  void aWrongComponentSettingIsNamedInOneLine() {
    String[][] cases = {
      {"io.etcfs.lock.etcd.cleanReleaseMillis", "is not PID.property=value"},
      {"nodot=1", "is not PID.property=value"},
      {"io.etcfs.lock.etc.cleanReleaseMillis=1", "no component 'io.etcfs.lock.etc' on this node"},
      {"io.etcfs.lock.etcd.nodeName=x", "io.etcfs.lock.etcd.nodeName is set by etcfs"},
      {"io.etcfs.etcd.password=x", "io.etcfs.etcd.password is set by etcfs"},
      {"io.etcfs.lock.etcd.=1", "'' in 'io.etcfs.lock.etcd.=1' is not a property name"},
    };
    for (String[] c : cases) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> NodeConfigs.withSettings(NodeConfigs.of(spec(FenceSpec.NONE)), c[0]), c[0]);
      assertTrue(e.getMessage().startsWith("ETCFS_NODE_CONFIG: "), e.getMessage());
      assertTrue(e.getMessage().contains(c[1]), e.getMessage());
      assertFalse(e.getMessage().contains("\n"), e.getMessage());
    }
  }

  @Test
  void execGetsItsCommandAndTheFilesystemName() {
    Map<String, Hashtable<String, Object>> c =
        NodeConfigs.of(spec(new FenceSpec("exec", "aws ec2 stop-instances", 45)));
    assertEquals("(etcfs.fence.agent=exec)", c.get("io.etcfs.fencing").get("fenceAgent.target"));
    assertEquals(45, c.get("io.etcfs.fencing").get("fenceTimeoutSeconds"));
    assertEquals(Map.of("fsName", "prod", ".command", "aws ec2 stop-instances"),
        Map.copyOf(c.get("io.etcfs.fence.exec")));
    assertFalse(c.containsKey("io.etcfs.fence.reservation"));
  }

  @Test
  void reservationGetsTheNodesDevice() {
    Map<String, Hashtable<String, Object>> c =
        NodeConfigs.of(spec(new FenceSpec("reservation", "", 30)));
    assertEquals("(etcfs.fence.agent=reservation)",
        c.get("io.etcfs.fencing").get("fenceAgent.target"));
    assertEquals(Map.of("device", "/dev/sdb"), Map.copyOf(c.get("io.etcfs.fence.reservation")));
    assertFalse(c.containsKey("io.etcfs.fence.exec"));
  }

  @Test
  void theSpecFileCarriesTheFenceSettings() throws Exception {
    NodeSpec s = spec(new FenceSpec("exec", "fence-it \"$ETCFS_FENCE_NODE\"", 12));
    s.write();
    assertEquals(s, NodeSpec.read(s.specFile()));
  }

  @Test
  void aSpecFileWithoutFenceSettingsHasNone() throws Exception {
    NodeSpec s = spec(FenceSpec.NONE);
    s.write();
    String text = Files.readString(s.specFile()).replaceAll("(?m)^fence\\..*\\n", "");
    Files.writeString(s.specFile(), text);
    assertEquals(FenceSpec.NONE, NodeSpec.read(s.specFile()).fence());
  }

  @Test
  void timeoutsRoundUpToWholeSeconds() {
    assertEquals(2, FenceSpec.of("none", null, Duration.ofMillis(1500)).timeoutSeconds());
    assertEquals(30, FenceSpec.of("none", null, Duration.ofSeconds(30)).timeoutSeconds());
    assertThrows(IllegalArgumentException.class,
        () -> FenceSpec.of("none", null, Duration.ofMillis(-1)));
  }
}

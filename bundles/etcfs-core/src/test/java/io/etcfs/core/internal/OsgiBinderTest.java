package io.etcfs.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** What a backend configured by a live switch takes from the node's settings, and its filter. */
class OsgiBinderTest {
  @Test
  void aSwitchedToBackendGetsTheSettingsGivenForItsPidOnly() {
    String env = "io.etcfs.lock.hazelcast.address=10.0.0.5, io.etcfs.lock.hazelcast.port=5701,"
        + "io.etcfs.lock.etcd.idleReleaseSeconds=60,io.etcfs.lock.hazelcast";
    assertEquals(Map.of("address", "10.0.0.5", "port", "5701"),
        OsgiBinder.settings("io.etcfs.lock.hazelcast", env));
    assertEquals(Map.of(), OsgiBinder.settings("io.etcfs.alloc.shared", env));
    assertEquals(Map.of(), OsgiBinder.settings("io.etcfs.lock.hazelcast", null));
  }

  /** The core's allocator target never matches an allocator a switch holds in standby. */
  @Test
  void anAllocatorInStandbyIsToldApartFromTheOneInUse() throws Exception {
    org.osgi.framework.Filter inUse = org.osgi.framework.FrameworkUtil.createFilter(
        OsgiBinder.filter(io.etcfs.core.fs.Switches.ALLOC, "shared", false));
    org.osgi.framework.Filter standby = org.osgi.framework.FrameworkUtil.createFilter(
        OsgiBinder.filter(io.etcfs.core.fs.Switches.ALLOC, "shared", true));
    Map<String, Object> waiting = Map.of("etcfs.backend", "shared", "etcfs.standby", true);
    Map<String, Object> used = Map.of("etcfs.backend", "shared");
    assertEquals(false, inUse.matches(waiting));
    assertEquals(true, inUse.matches(used));
    assertEquals(true, standby.matches(waiting));
    assertEquals(false, standby.matches(used));
    assertEquals("(etcfs.backend=etcd)",
        OsgiBinder.filter(io.etcfs.core.fs.Switches.LOCK, "etcd", false));
  }
}

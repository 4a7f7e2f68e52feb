package io.etcfs.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** What a backend configured by a live switch takes from the node's settings. */
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
}

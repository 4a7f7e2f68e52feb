package io.etcfs.lock.etcd.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.testing.ComponentConfigs;
import io.etcfs.testing.MemoryMetaStore;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Configuration checks; the lock semantics are in the contract suites. */
@Timeout(10)
class EtcdLockServiceTest {
  private final MemoryMetaStore store = new MemoryMetaStore();

  @AfterEach
  void close() {
    store.close();
  }

  @Test
  void namesItsBackendAndTakesTheSessionTtlFromConfiguration() {
    EtcdLockService locks = new EtcdLockService(store, config("fs1", "n1", 3));
    try {
      assertEquals("etcd", locks.backend());
      assertEquals(Duration.ofSeconds(3), locks.sessionTtl());
    } finally {
      locks.deactivate();
    }
  }

  @Test
  void refusesAMissingNodeNameOrANonPositiveTtl() {
    assertThrows(IllegalArgumentException.class,
        () -> new EtcdLockService(store, config("fs", " ", 2)));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> new EtcdLockService(store, config("fs", "n1", 0)));
    assertTrue(e.getMessage().contains("sessionTtlSeconds"), e.getMessage());
  }

  static EtcdLockService.Config config(String fs, String node, int ttl) {
    return ComponentConfigs.of(EtcdLockService.Config.class,
        Map.of("fsName", fs, "nodeName", node, "sessionTtlSeconds", ttl, "minHoldMillis", 50,
            "idleReleaseSeconds", 30));
  }
}

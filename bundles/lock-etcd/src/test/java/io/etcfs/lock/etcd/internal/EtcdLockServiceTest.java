package io.etcfs.lock.etcd.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.spi.lock.HeldLock;
import io.etcfs.spi.lock.LockMode;
import io.etcfs.spi.lock.LockService;
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

  /** Another node's exclusive lock shows in this node's view, asking nobody; its own does not. */
  @Test
  void anExclusiveLockElsewhereShowsInTheView() throws Exception {
    EtcdLockService a = new EtcdLockService(store, config("fs1", "a", 3));
    EtcdLockService b = new EtcdLockService(store, config("fs1", "b", 3));
    try {
      assertEquals(LockService.Writer.NONE, b.writerElsewhere(7));
      HeldLock lock = a.acquire(7, LockMode.EXCLUSIVE, Duration.ofSeconds(5));
      assertTrue(b.awaitApplied(lock.fencingToken(), 5000), "b's watch showed a's grant");
      assertEquals(LockService.Writer.HOLDING, b.writerElsewhere(7));
      assertEquals(LockService.Writer.NONE, a.writerElsewhere(7), "its own lock is not elsewhere");
      long now = store.range(io.etcfs.spi.meta.Keys.of("/"), io.etcfs.spi.meta.Keys.of("0"), 1)
          .revision();
      assertFalse(b.awaitApplied(now + 100, 50), "a revision nobody wrote is never reached");
    } finally {
      a.deactivate();
      b.deactivate();
    }
  }

  static EtcdLockService.Config config(String fs, String node, int ttl) {
    return ComponentConfigs.of(EtcdLockService.Config.class,
        Map.of("fsName", fs, "nodeName", node, "sessionTtlSeconds", ttl, "minHoldMillis", 50,
            "idleReleaseSeconds", 30));
  }
}

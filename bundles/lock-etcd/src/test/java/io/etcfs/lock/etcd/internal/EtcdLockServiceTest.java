package io.etcfs.lock.etcd.internal;

import io.etcfs.testing.ComponentConfigs;
import java.util.Map;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.spi.lock.LockMode;
import io.etcfs.spi.lock.RecallHandler;
import io.etcfs.spi.meta.MetaStore;
import java.lang.reflect.Proxy;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;

@Timeout(10)
class EtcdLockServiceTest {

  @Test
  void namesItsBackend() {
    assertEquals("etcd", service(2).backend());
  }

  @Test
  void lockOperationsNameTheIssueThatBuildsThem() {
    EtcdLockService locks = service(2);
    assertNotYet(locks::session);
    assertNotYet(() -> locks.acquire(1, LockMode.SHARED, Duration.ofSeconds(1)));
    assertNotYet(() -> locks.release(null));
  }

  @Test
  void keepsTheLatestRecallHandler() {
    EtcdLockService locks = service(2);
    RecallHandler first = (lock, wanted) -> {};
    RecallHandler second = (lock, wanted) -> {};
    locks.setRecallHandler(first);
    locks.setRecallHandler(second);
    assertSame(second, locks.recallHandler());
  }

  @Test
  void takesTheSessionTtlFromConfiguration() {
    assertEquals(Duration.ofSeconds(3), service(3).sessionTtl());
  }

  @Test
  void refusesAMissingNodeNameOrANonPositiveTtl() {
    assertThrows(IllegalArgumentException.class, () -> service("fs", " ", 2));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> service(0));
    assertTrue(e.getMessage().contains("sessionTtlSeconds"), e.getMessage());
  }

  private static void assertNotYet(Executable call) {
    UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class, call);
    assertEquals("inode locks on etcd are built in issue #4 (lock-etcd)", e.getMessage());
  }

  private static EtcdLockService service(int ttl) {
    return service("fs1", "n1", ttl);
  }

  private static EtcdLockService service(String fs, String node, int ttl) {
    return new EtcdLockService(unusedStore(), config(fs, node, ttl));
  }

  private static MetaStore unusedStore() {
    return (MetaStore)
        Proxy.newProxyInstance(
            MetaStore.class.getClassLoader(),
            new Class<?>[] {MetaStore.class},
            (proxy, method, args) -> {
              throw new AssertionError("the store is not used at this stage: " + method);
            });
  }

  private static EtcdLockService.Config config(String fs, String node, int ttl) {
    return ComponentConfigs.of(EtcdLockService.Config.class,
        Map.of("fsName", fs, "nodeName", node, "sessionTtlSeconds", ttl));
  }
}

package io.etcfs.lock.etcd.internal;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.spi.lock.HeldLock;
import io.etcfs.spi.lock.LockMode;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.Txn;
import io.etcfs.testing.MemoryMetaStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The lock service when its watch is cancelled or compacted away. */
@Timeout(60)
class LockFailuresTest {
  private final MemoryMetaStore store = new MemoryMetaStore();
  private final List<EtcdLockService> nodes = new ArrayList<>();

  @AfterEach
  void stop() {
    nodes.forEach(EtcdLockService::deactivate);
    store.close();
  }

  private EtcdLockService node(String name) {
    EtcdLockService n = new EtcdLockService(store, EtcdLockServiceTest.config("f", name, 2));
    n.setRecallHandler((lock, wanted) -> { });
    nodes.add(n);
    return n;
  }

  @Test
  void aHolderWhoseWatchWasCancelledIsStillRecalled() throws Exception {
    EtcdLockService a = node("a");
    EtcdLockService b = node("b");
    HeldLock held = a.acquire(7, LockMode.EXCLUSIVE, Duration.ofSeconds(5));
    store.compact(store.revision());
    store.cancelWatches(); // both nodes' lock watches end; requests made now reach no watch
    HeldLock taken = b.acquire(7, LockMode.EXCLUSIVE, Duration.ofSeconds(20));
    assertTrue(taken.fencingToken() > held.fencingToken());
    assertFalse(HeldKeys.standing(store, held), "the recalled holder's key is gone");
    assertTrue(HeldKeys.standing(store, taken));
  }

  @Test
  void aWaiterWhoseWatchWasCancelledIsStillWoken() throws Exception {
    EtcdLockService a = node("a");
    EtcdLockService b = node("b");
    a.setRecallHandler((lock, wanted) -> { });
    HeldLock held = a.acquire(8, LockMode.EXCLUSIVE, Duration.ofSeconds(5));
    var waiter = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
      try {
        return b.acquire(8, LockMode.SHARED, Duration.ofSeconds(20));
      } catch (Exception e) {
        throw new java.util.concurrent.CompletionException(e);
      }
    });
    store.cancelWatches();
    a.release(held); // the delete happens while the waiter's watch is being restarted
    assertTrue(waiter.get().grantRevision() > 0);
  }

  @Test
  void stateIsKeptOnlyForInodesInUse() throws Exception {
    EtcdLockService a = node("a");
    for (long ino = 100; ino < 400; ino++) {
      a.release(a.acquire(ino, LockMode.EXCLUSIVE, Duration.ofSeconds(5)));
    }
    HeldLock kept = a.acquire(7, LockMode.SHARED, Duration.ofSeconds(5));
    org.junit.jupiter.api.Assertions.assertEquals(1, a.trackedInodes(), "only the held inode");
    a.release(kept);
    org.junit.jupiter.api.Assertions.assertEquals(0, a.trackedInodes());
  }

}

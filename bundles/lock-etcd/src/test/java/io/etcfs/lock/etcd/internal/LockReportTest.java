package io.etcfs.lock.etcd.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.spi.lock.HeldLock;
import io.etcfs.spi.lock.LockMode;
import io.etcfs.spi.lock.LockReport;
import io.etcfs.spi.lock.LockReport.ClusterLock;
import io.etcfs.spi.lock.LockReport.LockState;
import io.etcfs.testing.MemoryMetaStore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** What the etcd backend reports of its locks (the shell's {@code locks} shows it). */
@Timeout(20)
class LockReportTest {
  private final MemoryMetaStore store = new MemoryMetaStore();
  private final EtcdLockService n1 = new EtcdLockService(store,
      EtcdLockServiceTest.config("fs1", "n1", 5));
  private final EtcdLockService n2 = new EtcdLockService(store,
      EtcdLockServiceTest.config("fs1", "n2", 5));

  @AfterEach
  void close() {
    n1.deactivate();
    n2.deactivate();
    store.close();
  }

  @Test
  void heldRecallPendingAndWaitingLocksOnEachNodeAndEveryRequestInTheCluster()
      throws Exception {
    assertEquals(List.of(), n1.locks());
    assertEquals("etcd", n1.backend());
    CountDownLatch recalled = new CountDownLatch(1);
    CountDownLatch flushed = new CountDownLatch(1);
    n1.setRecallHandler((lock, wanted) -> {
      recalled.countDown();
      await(flushed);
    });
    HeldLock held = n1.acquire(0x2a, LockMode.EXCLUSIVE, Duration.ofSeconds(5));
    HeldLock shared = n1.acquire(0x2b, LockMode.SHARED, Duration.ofSeconds(5));
    CompletableFuture<HeldLock> waiter = CompletableFuture.supplyAsync(() -> {
      try {
        return n2.acquire(0x2a, LockMode.SHARED, Duration.ofSeconds(10));
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    assertTrue(recalled.await(5, TimeUnit.SECONDS));

    List<LockState> mine = n1.locks();
    assertEquals(2, mine.size(), mine.toString());
    LockState x = mine.get(0);
    assertEquals(List.of(0x2aL, LockMode.EXCLUSIVE, LockReport.State.RECALL_PENDING,
        held.fencingToken(), 1, 0L), List.of(x.inode(), x.mode(), x.state(), x.token(),
        x.waiters(), x.recalls()), x.toString());
    LockState s = mine.get(1);
    assertEquals(List.of(0x2bL, LockReport.State.HELD, shared.fencingToken(), 0),
        List.of(s.inode(), s.state(), s.token(), s.waiters()), s.toString());
    assertEquals("0", n1.counters().get("recalls served by this node"));
    // n1's two requests, each with its queue read back; none of them a get
    assertTrue(n1.counters().get("etcd round trips")
        .matches("0 reads, \\d+ range reads, [2-9]\\d* transactions"), n1.counters().toString());
    LockState w = n2.locks().get(0);
    assertEquals(List.of(0x2aL, LockMode.SHARED, LockReport.State.WAITING, -1),
        List.of(w.inode(), w.mode(), w.state(), w.waiters()), w.toString());

    List<ClusterLock> all = n2.cluster().orElseThrow();
    assertEquals(3, all.size(), all.toString());
    assertEquals(new ClusterLock(0x2a, LockMode.EXCLUSIVE, true, false, "n1",
        held.fencingToken(), Long.toHexString(held.sessionId())), all.get(0));
    assertEquals(List.of(0x2aL, false, "n2"),
        List.of(all.get(1).inode(), all.get(1).held(), all.get(1).node()));
    assertEquals(List.of(0x2bL, true, "n1"),
        List.of(all.get(2).inode(), all.get(2).held(), all.get(2).node()));

    flushed.countDown();
    waiter.get(10, TimeUnit.SECONDS);
    assertEquals("1", n1.counters().get("recalls served by this node"));
    assertEquals(1, n1.recallsServed(0x2a));
    assertEquals(0, n1.recallsServed(0x2b));
    n1.acquire(0x2a, LockMode.SHARED, Duration.ofSeconds(5));
    LockState again = n1.locks().get(0);
    assertEquals(List.of(0x2aL, LockMode.SHARED, LockReport.State.HELD, 1L),
        List.of(again.inode(), again.mode(), again.state(), again.recalls()), again.toString());
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}

package io.etcfs.lock.etcd.internal;

import static io.etcfs.testing.Eventually.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.spi.lock.HeldLock;
import io.etcfs.spi.lock.LockMode;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.Txn;
import io.etcfs.spi.meta.TxnResult;
import io.etcfs.support.meta.ForwardingMetaStore;
import io.etcfs.testing.ComponentConfigs;
import io.etcfs.testing.MemoryMetaStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Idle locks are given back a few transactions at a time, many locks in each: a node holding
 * thousands of them (after a tar x) once gave them all back at once, a transaction each, and lost
 * its own lock session to the load it made on etcd.
 */
@Timeout(60)
class IdleReleaseTest {
  private final MemoryMetaStore memory = new MemoryMetaStore();
  /** Commits that delete lock keys and have not answered yet; each takes 3 ms per key. */
  private final AtomicInteger releasing = new AtomicInteger();
  private final AtomicInteger mostAtOnce = new AtomicInteger();
  /** Lock keys deleted, and the commits that deleted them. */
  private final AtomicInteger released = new AtomicInteger();
  private final AtomicInteger releaseCommits = new AtomicInteger();
  private final List<EtcdLockService> nodes = new ArrayList<>();

  private final ForwardingMetaStore store = new ForwardingMetaStore(memory) {
    @Override
    public TxnResult commit(Txn txn) {
      int keys = (int) txn.onSuccess().stream().filter(op -> op instanceof Op.Delete).count();
      if (keys == 0) {
        return super.commit(txn);
      }
      mostAtOnce.accumulateAndGet(releasing.incrementAndGet(), Math::max);
      try {
        TimeUnit.MILLISECONDS.sleep(3L * keys);
        TxnResult r = super.commit(txn);
        if (r.succeeded()) {
          released.addAndGet(keys);
          releaseCommits.incrementAndGet();
        }
        return r;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      } finally {
        releasing.decrementAndGet();
      }
    }
  };

  @AfterEach
  void stop() {
    nodes.forEach(EtcdLockService::deactivate);
    memory.close();
  }

  private EtcdLockService node(String name, int idleReleaseSeconds) {
    return node(name, idleReleaseSeconds, 1000);
  }

  private EtcdLockService node(String name, int idleReleaseSeconds, int cleanReleaseMillis) {
    EtcdLockService n = new EtcdLockService(store, ComponentConfigs.of(
        EtcdLockService.Config.class, Map.of("fsName", "f", "nodeName", name,
            "sessionTtlSeconds", 2, "minHoldMillis", 50,
            "idleReleaseSeconds", idleReleaseSeconds,
            "cleanReleaseMillis", cleanReleaseMillis)));
    n.setRecallHandler((lock, wanted) -> { });
    nodes.add(n);
    return n;
  }

  @Test
  void hundredsOfIdleLocksAreGivenBackInAFewTransactions() throws Exception {
    EtcdLockService a = node("a", 1);
    int count = 300;
    for (long ino = 1; ino <= count; ino++) {
      a.acquire(ino, LockMode.EXCLUSIVE, Duration.ofSeconds(10));
    }
    assertEquals(count, a.heldLocks().size());
    eventually("every idle lock given back",
        () -> a.heldLocks().isEmpty() && released.get() == count);
    assertTrue(mostAtOnce.get() <= EtcdLockService.IDLE_RELEASERS,
        mostAtOnce.get() + " releases at once");
    // at most GIVE_BACK_MAX a transaction; the timer's ticks may cut a few more batches
    assertTrue(releaseCommits.get() <= 3 * (count / IdleRelease.GIVE_BACK_MAX + 1),
        releaseCommits.get() + " transactions for " + count + " locks");
  }

  /**
   * An exclusive lock declared clean (what a close's commit does) is given back once unused for
   * cleanReleaseMillis, so that a reader elsewhere finds it free; one still dirty is kept until
   * idleReleaseSeconds.
   */
  @Test
  void aCleanLockIsGivenBackSoonADirtyOneIsKept() throws Exception {
    EtcdLockService a = node("a", 30, 200);
    HeldLock clean = a.acquire(1, LockMode.EXCLUSIVE, Duration.ofSeconds(10));
    HeldLock dirty = a.acquire(2, LockMode.EXCLUSIVE, Duration.ofSeconds(10));
    a.clean(clean, true); // what the core tells at a close's commit
    eventually("the clean lock given back", () -> !a.heldLocks().contains(clean));
    assertEquals(List.of(dirty), a.heldLocks());
  }

  /** A lock queued for an idle give-back is recalled at once when another node asks for it. */
  @Test
  void aRequestOvertakesTheIdleQueue() throws Exception {
    EtcdLockService a = node("a", 1);
    EtcdLockService b = node("b", 30);
    int count = 600; // about a second of idle give-backs at 3 ms each, two at a time
    for (long ino = 1; ino <= count; ino++) {
      a.acquire(ino, LockMode.EXCLUSIVE, Duration.ofSeconds(10));
    }
    eventually("the give-backs to start", () -> released.get() > 0);
    long t0 = System.nanoTime();
    HeldLock theirs = b.acquire(count, LockMode.SHARED, Duration.ofSeconds(20));
    double seconds = (System.nanoTime() - t0) / 1e9;
    assertEquals(count, theirs.inode());
    assertTrue(released.get() < count, "the last lock was reached by the queue, not the request");
    assertTrue(seconds < 1.0, "granted after " + seconds + " s");
  }
}

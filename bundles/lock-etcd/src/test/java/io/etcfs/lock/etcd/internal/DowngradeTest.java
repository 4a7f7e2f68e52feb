package io.etcfs.lock.etcd.internal;

import static io.etcfs.testing.Eventually.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.spi.lock.HeldLock;
import io.etcfs.spi.lock.LockMode;
import io.etcfs.spi.lock.RecallHandler;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.Txn;
import io.etcfs.testing.ComponentConfigs;
import io.etcfs.testing.MemoryMetaStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A clean exclusive lock made shared in place (SPI lock 2.6): same key, same fencing token, no
 * hand-over; readers elsewhere are granted without a recall; a writer elsewhere recalls the
 * shared lock; nothing prepared under the exclusive lock commits after the change; a write
 * here asks for the lock again.
 */
@Timeout(60)
class DowngradeTest {
  private static final String LOCKS = "/etcfs/f/locks/";
  private final MemoryMetaStore store = new MemoryMetaStore();
  private final List<EtcdLockService> nodes = new ArrayList<>();

  /** A handler as the core's: agrees to every downgrade, records what it is told. */
  private static final class Recorder implements RecallHandler {
    final List<HeldLock> recalled = new CopyOnWriteArrayList<>();
    final List<HeldLock[]> downgraded = new CopyOnWriteArrayList<>();
    volatile boolean agree = true;

    @Override
    public void recall(HeldLock lock, LockMode wanted) {
      recalled.add(lock);
    }

    @Override
    public boolean downgrading(HeldLock lock) {
      return agree;
    }

    @Override
    public void downgraded(HeldLock from, HeldLock to) {
      downgraded.add(new HeldLock[] {from, to});
    }
  }

  @AfterEach
  void stop() {
    nodes.forEach(EtcdLockService::deactivate);
    store.close();
  }

  private EtcdLockService node(String name, int cleanReleaseMillis, Recorder handler) {
    EtcdLockService n = new EtcdLockService(store, ComponentConfigs.of(
        EtcdLockService.Config.class, Map.of("fsName", "f", "nodeName", name,
            "sessionTtlSeconds", 2, "minHoldMillis", 50, "idleReleaseSeconds", 30,
            "cleanReleaseMillis", cleanReleaseMillis)));
    n.setRecallHandler(handler);
    nodes.add(n);
    return n;
  }

  /** What the core tells at a close's commit: nothing is buffered under the lock. */
  private void close(EtcdLockService n, HeldLock lock) {
    n.clean(lock, true);
  }


  private String keyValue(long inode, long lease) {
    return store.get(Keys.of(LOCKS + hex(inode) + "/" + hex(lease))).orElseThrow().valueString();
  }

  @Test
  void anIdleCleanLockTurnsSharedInPlaceAndReadersElsewhereRecallNothing() throws Exception {
    Recorder ha = new Recorder();
    EtcdLockService a = node("a", 200, ha);
    EtcdLockService b = node("b", 200, new Recorder());
    HeldLock x = a.acquire(1, LockMode.EXCLUSIVE, Duration.ofSeconds(10));
    HeldLock dirty = a.acquire(2, LockMode.EXCLUSIVE, Duration.ofSeconds(10));
    close(a, x);
    eventually("the clean lock made shared", () -> a.downgrades() == 1);
    HeldLock s = new HeldLock(1, LockMode.SHARED, x.fencingToken(), x.sessionId(),
        x.grantRevision());
    assertTrue(a.heldLocks().contains(s), a.heldLocks().toString());
    assertTrue(a.heldLocks().contains(dirty), "a dirty lock stays exclusive");
    assertEquals(1, ha.downgraded.size());
    assertEquals(x, ha.downgraded.get(0)[0]);
    assertEquals(s, ha.downgraded.get(0)[1]);
    assertEquals("S a", keyValue(1, x.sessionId()));

    // The exclusive grant's key stands no more (it says shared); its create revision, the token,
    // is unchanged.
    assertFalse(HeldKeys.standing(store, x), "the key still says exclusive");

    long t0 = System.nanoTime();
    HeldLock theirs = b.acquire(1, LockMode.SHARED, Duration.ofSeconds(10));
    assertEquals(LockMode.SHARED, theirs.mode());
    assertTrue(ha.recalled.isEmpty(), "a reader elsewhere recalled the shared lock");
    assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(1), "granted at once");
    assertTrue(theirs.grantRevision() > x.fencingToken());
  }

  @Test
  void aWriterElsewhereRecallsTheSharedLockAndAWriteHereUpgrades() throws Exception {
    Recorder ha = new Recorder();
    EtcdLockService a = node("a", 100, ha);
    EtcdLockService b = node("b", 100, new Recorder());
    HeldLock x = a.acquire(1, LockMode.EXCLUSIVE, Duration.ofSeconds(10));
    close(a, x);
    eventually("made shared", () -> a.downgrades() == 1);

    // A write here: a new exclusive grant, a new token (the shared key is given up first).
    HeldLock again = a.acquire(1, LockMode.EXCLUSIVE, Duration.ofSeconds(10));
    assertEquals(LockMode.EXCLUSIVE, again.mode());
    assertNotEquals(x.fencingToken(), again.fencingToken());
    assertTrue(HeldKeys.standing(store, again));
    close(a, again);
    eventually("made shared again", () -> a.downgrades() == 2);

    // A writer elsewhere recalls it, as any shared lock (the service releases it after the
    // handler returns).
    HeldLock w = b.acquire(1, LockMode.EXCLUSIVE, Duration.ofSeconds(10));
    assertEquals(LockMode.EXCLUSIVE, w.mode());
    assertEquals(1, ha.recalled.size());
    assertEquals(LockMode.SHARED, ha.recalled.get(0).mode());
    assertFalse(HeldKeys.standing(store, again), "the old holder's key outlived the hand-over");
    assertTrue(HeldKeys.standing(store, w));
  }

  /**
   * Within the clean period, a reader's request recalls the clean lock as any other (a change
   * in place on that path is not done: see Recalls.deliver).
   */
  @Test
  void aReadersRequestWithinTheCleanPeriodRecallsTheLock() throws Exception {
    Recorder ha = new Recorder();
    EtcdLockService a = node("a", 60_000, ha);
    EtcdLockService b = node("b", 60_000, new Recorder());
    HeldLock x = a.acquire(1, LockMode.EXCLUSIVE, Duration.ofSeconds(10));
    close(a, x);
    HeldLock theirs = b.acquire(1, LockMode.SHARED, Duration.ofSeconds(10));
    assertEquals(LockMode.SHARED, theirs.mode());
    assertEquals(List.of(x), ha.recalled);
    assertEquals(0, a.downgrades());
    assertTrue(a.heldLocks().isEmpty(), a.heldLocks().toString());
  }

  /** A handler that does not agree (something is buffered): the lock is given back as before. */
  @Test
  void aRefusedDowngradeGivesTheLockBack() throws Exception {
    Recorder ha = new Recorder();
    ha.agree = false;
    EtcdLockService a = node("a", 100, ha);
    HeldLock x = a.acquire(1, LockMode.EXCLUSIVE, Duration.ofSeconds(10));
    close(a, x);
    eventually("given back", () -> a.heldLocks().isEmpty());
    assertEquals(0, a.downgrades());
    assertEquals(List.of(x), ha.recalled);
  }

  /** A write made dirty first: the lock is not clean any more, and stays exclusive. */
  @Test
  void aLockMadeDirtyAgainIsNotDowngraded() throws Exception {
    Recorder ha = new Recorder();
    EtcdLockService a = node("a", 100, ha);
    HeldLock x = a.acquire(1, LockMode.EXCLUSIVE, Duration.ofSeconds(10));
    close(a, x);
    a.clean(x, false);
    assertEquals("X a", keyValue(1, x.sessionId()));
    TimeUnit.MILLISECONDS.sleep(400); // four clean periods: a fixed wait for a non-event
    assertEquals(0, a.downgrades());
    assertEquals(List.of(x), a.heldLocks());
    assertTrue(HeldKeys.standing(store, x));
  }

  private static String hex(long v) {
    String s = Long.toHexString(v);
    return "0".repeat(16 - s.length()) + s;
  }
}

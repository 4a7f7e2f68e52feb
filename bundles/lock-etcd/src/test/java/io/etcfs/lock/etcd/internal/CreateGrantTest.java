package io.etcfs.lock.etcd.internal;

import static io.etcfs.testing.Eventually.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.spi.lock.CreateGrant;
import io.etcfs.spi.lock.HeldLock;
import io.etcfs.spi.lock.LockMode;
import io.etcfs.spi.lock.LockService;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.MetaStoreException;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.Txn;
import io.etcfs.spi.meta.TxnResult;
import io.etcfs.testing.ComponentConfigs;
import io.etcfs.testing.MemoryMetaStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The lock a create grants its creator ({@link EtcdLockService#createGrant}) in the etcd
 * backend: the key it puts, the races around its adoption, a session ending on either side of
 * the create's commit, an idle release, a create whose outcome is unknown.
 */
@Timeout(60)
class CreateGrantTest {
  private static final String LOCKS = "/etcfs/f/locks/";
  private final MemoryMetaStore store = new MemoryMetaStore();
  private final List<EtcdLockService> nodes = new ArrayList<>();

  @AfterEach
  void stop() {
    nodes.forEach(EtcdLockService::deactivate);
    store.close();
  }

  private EtcdLockService node(String name, int idleReleaseSeconds) {
    EtcdLockService n = new EtcdLockService(store, ComponentConfigs.of(
        EtcdLockService.Config.class, Map.of("fsName", "f", "nodeName", name,
            "sessionTtlSeconds", 2, "minHoldMillis", 50,
            "idleReleaseSeconds", idleReleaseSeconds)));
    n.setRecallHandler((lock, wanted) -> { });
    nodes.add(n);
    return n;
  }

  private EtcdLockService node(String name) {
    return node(name, 30);
  }

  @Test
  void theCreatePutsTheExclusiveKeyUnderTheSessionWhoseCreateRevisionIsTheToken() {
    EtcdLockService a = node("a");
    CreateGrant grant = a.createGrant(0x10);
    assertEquals(a.session().id(), grant.sessionId());
    TxnResult created = create(grant);
    var key = store.get(Keys.of(LOCKS + hex(0x10) + "/" + hex(grant.sessionId()))).orElseThrow();
    assertEquals("X a", key.valueString());
    assertEquals(grant.sessionId(), key.lease());
    HeldLock lock = a.adoptCreated(grant, created.revision());
    assertEquals(new HeldLock(0x10, LockMode.EXCLUSIVE, created.revision(), grant.sessionId(),
        created.revision()), lock);
    assertEquals(key.createRevision(), lock.fencingToken());
    assertTrue(HeldKeys.standing(store, lock));
  }

  /**
   * Another node can ask for the lock as soon as the create committed, before the creator has
   * recorded it: its watch may show that request first. The creator still recalls its lock at
   * once (not only at the waiter's repeat of its request, 2 s later).
   */
  @Test
  void aRequestSeenBeforeTheLockWasAdoptedRecallsIt() throws Exception {
    EtcdLockService a = node("a");
    EtcdLockService b = node("b");
    CreateGrant grant = a.createGrant(0x11);
    TxnResult created = create(grant);
    CompletableFuture<HeldLock> waiter = CompletableFuture.supplyAsync(() -> {
      try {
        return b.acquire(0x11, LockMode.SHARED, Duration.ofSeconds(20));
      } catch (Exception e) {
        throw new CompletionException(e);
      }
    });
    eventually("a's watch to show b's request", () -> a.queuedInTable(0x11) == 2);
    long t0 = System.nanoTime();
    HeldLock lock = a.adoptCreated(grant, created.revision());
    HeldLock theirs = waiter.get(20, TimeUnit.SECONDS);
    double seconds = (System.nanoTime() - t0) / 1e9;
    assertTrue(seconds < 1.5, "recalled after " + seconds + " s");
    assertTrue(theirs.fencingToken() > lock.fencingToken());
    assertFalse(HeldKeys.standing(store, lock));
  }

  @Test
  void anIdleCreatedLockIsGivenBack() throws Exception {
    EtcdLockService a = node("a", 1);
    CreateGrant grant = a.createGrant(0x12);
    HeldLock lock = a.adoptCreated(grant, create(grant).revision());
    assertEquals(List.of(lock), a.heldLocks());
    eventually("the idle lock to be given back", () -> a.heldLocks().isEmpty()
        && store.prefix(Keys.of(LOCKS + hex(0x12) + "/"), 0).kvs().isEmpty());
  }

  /** etcd refuses a put under a lease it no longer has: the create changes nothing. */
  @Test
  void aSessionThatEndedBeforeTheCreateFailsTheCreateWhole() throws Exception {
    EtcdLockService a = node("a");
    CreateGrant grant = a.createGrant(0x13);
    store.expireLease(grant.sessionId());
    MetaStoreException e = assertThrows(MetaStoreException.class, () -> create(grant));
    assertEquals(MetaStoreException.Kind.LEASE_NOT_FOUND, e.kind());
    assertTrue(store.get(Keys.of("/created/" + 0x13)).isEmpty());
    // The next attempt, once the node knows its session ended, runs under a new one.
    eventually("a new session", () -> a.createGrant(0x13).sessionId() != grant.sessionId());
    CreateGrant again = a.createGrant(0x13);
    HeldLock lock = a.adoptCreated(again, create(again).revision());
    assertTrue(HeldKeys.standing(store, lock));
  }

  /**
   * A session that ends after the create committed takes the key with it: nothing can be
   * committed under the lock, whether it was adopted before the end was noticed or not; once
   * noticed, nothing is adopted.
   */
  @Test
  void aSessionThatEndedAfterTheCreateLeavesNothingToCommitUnder() throws Exception {
    EtcdLockService a = node("a");
    CreateGrant grant = a.createGrant(0x14);
    TxnResult created = create(grant);
    store.expireLease(grant.sessionId());
    HeldLock early = new HeldLock(0x14, LockMode.EXCLUSIVE, created.revision(),
        grant.sessionId(), created.revision());
    assertFalse(HeldKeys.standing(store, early), "the key went with the lease");
    eventually("a to notice its session ended", () -> a.heldLocks().isEmpty()
        && a.session().id() != grant.sessionId());
    assertNull(a.adoptCreated(grant, created.revision()));
    assertTrue(a.heldLocks().isEmpty());
  }

  @Test
  void aCreateWithAnUnknownOutcomeHasItsKeyRemoved() throws Exception {
    EtcdLockService a = node("a");
    EtcdLockService b = node("b");
    CreateGrant grant = a.createGrant(0x15);
    create(grant); // applied, but suppose the answer was lost
    a.abandonCreated(grant);
    assertTrue(store.prefix(Keys.of(LOCKS + hex(0x15) + "/"), 0).kvs().isEmpty());
    b.acquire(0x15, LockMode.EXCLUSIVE, Duration.ofSeconds(1)); // nobody in the way
  }

  private TxnResult create(CreateGrant grant) {
    Txn txn = new Txn();
    grant.guards().forEach(txn::when);
    txn.then(Op.put(Keys.of("/created/" + grant.inode()), new byte[] {1}));
    grant.ops().forEach(txn::then);
    TxnResult r = store.commit(txn);
    assertTrue(r.succeeded());
    return r;
  }


  private static String hex(long v) {
    return String.format("%016x", v);
  }
}

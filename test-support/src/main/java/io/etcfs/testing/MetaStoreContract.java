package io.etcfs.testing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.etcfs.etcd.client.EtcdMetaStore;
import io.etcfs.spi.meta.Compare;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.MetaStoreException;
import io.etcfs.spi.meta.MetaStoreException.Kind;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.RangeResult;
import io.etcfs.spi.meta.Txn;
import io.etcfs.spi.meta.TxnResult;
import io.etcfs.spi.meta.Watch;
import io.etcfs.spi.meta.WatchEvent;
import io.etcfs.spi.meta.WatchListener;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The semantics every {@link MetaStore} must have, run against each engine by a subclass. Each
 * test works under its own key prefix, so one store can serve all tests of a class.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
public abstract class MetaStoreContract {
  private static final Duration WAIT = Duration.ofSeconds(10);

  private String prefix;

  protected abstract MetaStore store();

  /** Compacts the store's history up to {@code revision}; override for other engines. */
  protected void compact(long revision) {
    if (store() instanceof EtcdMetaStore etcd) {
      etcd.compact(revision);
    } else if (store() instanceof MemoryMetaStore memory) {
      memory.compact(revision);
    } else {
      fail("override compact(long) for " + store().getClass().getName());
    }
  }

  @BeforeEach
  void uniquePrefix() {
    prefix = "/contract/" + UUID.randomUUID() + "/";
  }

  protected byte[] key(String name) {
    return Keys.of(prefix + name);
  }

  private TxnResult put(String name, String value) {
    return store().commit(new Txn().then(Op.put(key(name), Keys.of(value))));
  }

  @Test
  void anAbsentKeyReadsEmpty() {
    assertTrue(store().get(key("nothing")).isEmpty());
  }

  @Test
  void putsTrackCreateRevisionModRevisionAndVersion() {
    long r1 = put("k", "1").revision();
    long r2 = put("k", "2").revision();
    KeyValue kv = store().get(key("k")).orElseThrow();
    assertTrue(r2 > r1);
    assertEquals("2", kv.valueString());
    assertEquals(r1, kv.createRevision());
    assertEquals(r2, kv.modRevision());
    assertEquals(2, kv.version());
    assertEquals(0, kv.lease());
  }

  @Test
  void aDeletedKeyIsRecreatedAsANewIncarnation() {
    put("k", "1");
    store().commit(new Txn().then(Op.delete(key("k"))));
    long r3 = put("k", "again").revision();
    KeyValue kv = store().get(key("k")).orElseThrow();
    assertEquals(r3, kv.createRevision());
    assertEquals(1, kv.version());
  }

  @Test
  void oneTxnAppliesAllItsOpsAtOneRevision() {
    TxnResult r = store().commit(new Txn()
        .then(Op.put(key("a"), Keys.of("1")))
        .then(Op.put(key("b"), Keys.of("2"))));
    assertTrue(r.succeeded());
    assertEquals(r.revision(), store().get(key("a")).orElseThrow().modRevision());
    assertEquals(r.revision(), store().get(key("b")).orElseThrow().modRevision());
  }

  @Test
  void comparesGuardTheSuccessBranch() {
    long r1 = put("k", "1").revision();
    assertTrue(store().commit(new Txn().when(Compare.modRevision(key("k"), r1))
        .when(Compare.createRevision(key("k"), r1))
        .when(Compare.value(key("k"), Keys.of("1")))
        .when(Compare.absent(key("other")))
        .then(Op.put(key("k"), Keys.of("2")))).succeeded());
    TxnResult stale = store().commit(new Txn().when(Compare.modRevision(key("k"), r1))
        .then(Op.put(key("k"), Keys.of("3")))
        .otherwise(Op.put(key("lost"), Keys.of("yes"))));
    assertFalse(stale.succeeded());
    assertEquals("2", store().get(key("k")).orElseThrow().valueString());
    assertEquals("yes", store().get(key("lost")).orElseThrow().valueString());
    assertFalse(store().commit(new Txn().when(Compare.absent(key("k")))).succeeded());
  }

  @Test
  void anAbsentKeyHasRevisionsZeroButNoValue() {
    assertTrue(store().commit(new Txn().when(Compare.modRevision(key("none"), 0))
        .when(Compare.createRevision(key("none"), 0))).succeeded());
    assertFalse(store().commit(new Txn()
        .when(Compare.value(key("none"), new byte[0]))).succeeded());
  }

  /** Below and above (meta 2.1): strict, on revisions and bytewise on values; as etcd does. */
  @Test
  void comparesBelowAndAboveAreStrict() {
    long created = put("k", "m").revision();
    long changed = put("k", "n").revision();
    assertTrue(holds(Compare.modRevisionBelow(key("k"), changed + 1)));
    assertFalse(holds(Compare.modRevisionBelow(key("k"), changed)));
    assertTrue(holds(Compare.modRevisionAbove(key("k"), changed - 1)));
    assertFalse(holds(Compare.modRevisionAbove(key("k"), changed)));
    assertTrue(holds(Compare.createRevisionBelow(key("k"), created + 1)));
    assertFalse(holds(Compare.createRevisionBelow(key("k"), created)));
    assertTrue(holds(Compare.createRevisionAbove(key("k"), created - 1)));
    assertFalse(holds(Compare.createRevisionAbove(key("k"), created)));
    assertTrue(holds(Compare.valueBelow(key("k"), Keys.of("o"))));
    assertFalse(holds(Compare.valueBelow(key("k"), Keys.of("n"))));
    assertTrue(holds(Compare.valueAbove(key("k"), Keys.of("m"))));
    assertFalse(holds(Compare.valueAbove(key("k"), Keys.of("n"))));
    // unsigned: 0xff sorts after every ASCII byte
    assertTrue(holds(Compare.valueBelow(key("k"), new byte[] {(byte) 0xff})));
    // an absent key: revisions 0, and every value compare fails
    assertTrue(holds(Compare.modRevisionBelow(key("none"), 1)));
    assertFalse(holds(Compare.modRevisionAbove(key("none"), 0)));
    assertFalse(holds(Compare.valueBelow(key("none"), Keys.of("z"))));
    assertFalse(holds(Compare.valueAbove(key("none"), new byte[0])));
  }

  private boolean holds(Compare c) {
    return store().commit(new Txn().when(c)).succeeded();
  }

  @Test
  void aTxnThatWritesNothingKeepsTheRevision() {
    long before = put("k", "1").revision();
    TxnResult r = store().commit(new Txn().when(Compare.absent(key("k"))));
    assertFalse(r.succeeded());
    assertEquals(before, store().range(key(""), Keys.prefixEnd(key("")), 0).revision());
  }

  @Test
  void rangesAreOrderedLimitedAndFlagMore() {
    for (String k : List.of("c", "a", "b", "d", "e")) {
      put(k, k.toUpperCase());
    }
    RangeResult page = store().range(key("b"), key("e"), 2);
    assertEquals(List.of("B", "C"), page.kvs().stream().map(KeyValue::valueString).toList());
    assertTrue(page.more());
    RangeResult rest = store().range(key("b"), key("e"), 0);
    assertEquals(3, rest.kvs().size());
    assertFalse(rest.more());
    RangeResult toEnd = store().range(key("d"), new byte[0], 2);
    assertEquals(List.of("D", "E"), toEnd.kvs().stream().map(KeyValue::valueString).toList());
    assertEquals(5, store().prefix(key(""), 0).kvs().size());
  }

  @Test
  void keysOrderAsUnsignedBytes() {
    byte[] low = key("x");
    byte[] high = Keys.of(prefix + "\u00e9");
    store().commit(new Txn().then(Op.put(high, Keys.of("high"))).then(Op.put(low, Keys.of("low"))));
    assertEquals(List.of("low", "high"),
        store().prefix(key(""), 0).kvs().stream().map(KeyValue::valueString).toList());
  }

  @Test
  void deletesTakeAKeyARangeOrAPrefix() {
    for (String k : List.of("a", "b", "c", "d")) {
      put(k, k);
    }
    store().commit(new Txn().then(Op.delete(key("a"))));
    store().commit(new Txn().then(new Op.Delete(key("b"), key("d"))));
    assertEquals(List.of("d"), store().prefix(key(""), 0).kvs().stream()
        .map(KeyValue::valueString).toList());
    store().commit(new Txn().then(Op.deletePrefix(key(""))));
    assertTrue(store().prefix(key(""), 0).kvs().isEmpty());
  }

  @Test
  void tooManyOpsAreTooLarge() {
    Txn txn = new Txn();
    for (int i = 0; i < 129; i++) {
      txn.then(Op.put(key("k" + i), Keys.of("v")));
    }
    assertEquals(Kind.TOO_LARGE,
        assertThrows(MetaStoreException.class, () -> store().commit(txn)).kind());
    assertTrue(store().prefix(key(""), 0).kvs().isEmpty());
  }

  @Test
  void aPutInsideADeleteRangeOfTheSameTxnIsRejectedAndChangesNothing() {
    put("k", "1");
    Txn txn = new Txn().then(Op.deletePrefix(key(""))).then(Op.put(key("k"), Keys.of("2")));
    assertThrows(MetaStoreException.class, () -> store().commit(txn));
    assertEquals("1", store().get(key("k")).orElseThrow().valueString());
  }

  @Test
  void revokingALeaseDeletesItsKeysOnly() {
    long lease = store().grantLease(Duration.ofSeconds(30));
    store().commit(new Txn().then(Op.put(key("leased"), Keys.of("1"), lease))
        .then(Op.put(key("moved"), Keys.of("1"), lease))
        .then(Op.put(key("free"), Keys.of("1"))));
    assertEquals(lease, store().get(key("leased")).orElseThrow().lease());
    put("moved", "detached by a put without lease");
    assertTrue(store().keepAliveOnce(lease) > 0);
    store().revokeLease(lease);
    assertTrue(store().get(key("leased")).isEmpty());
    assertTrue(store().get(key("moved")).isPresent());
    assertTrue(store().get(key("free")).isPresent());
    store().revokeLease(lease);
  }

  @Test
  void aLeaseTellsItsTimeLeftUntilItIsGone() {
    long lease = store().grantLease(Duration.ofSeconds(30));
    long left = store().leaseTimeToLive(lease);
    assertTrue(left > 20 && left <= 30, "time left " + left);
    store().revokeLease(lease);
    assertEquals(-1, store().leaseTimeToLive(lease));
  }

  @Test
  void aGoneLeaseIsNotFound() {
    long lease = store().grantLease(Duration.ofSeconds(30));
    store().revokeLease(lease);
    assertEquals(Kind.LEASE_NOT_FOUND,
        assertThrows(MetaStoreException.class, () -> store().keepAliveOnce(lease)).kind());
    Txn txn = new Txn().then(Op.put(key("a"), Keys.of("1")))
        .then(Op.put(key("b"), Keys.of("1"), lease));
    assertEquals(Kind.LEASE_NOT_FOUND,
        assertThrows(MetaStoreException.class, () -> store().commit(txn)).kind());
    assertTrue(store().get(key("a")).isEmpty());
  }

  @Test
  void aLeaseExpiresWithoutKeepAlive() throws InterruptedException {
    long lease = store().grantLease(Duration.ofSeconds(1));
    store().commit(new Txn().then(Op.put(key("k"), Keys.of("1"), lease)));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
    while (store().get(key("k")).isPresent()) {
      assertTrue(System.nanoTime() < deadline, "the leased key outlived its lease");
      Thread.sleep(100);
    }
  }

  @Test
  void aReadInATransactionSeesTheWritesBeforeIt() {
    TxnResult r = store().commit(new Txn()
        .when(Compare.absent(key("tr/a")))
        .then(Op.put(key("tr/a"), Keys.of("1")))
        .then(Op.put(key("tr/b"), Keys.of("2")))
        .then(Op.rangePrefix(key("tr/")))
        .then(new Op.Range(key("tr/"), Keys.prefixEnd(key("tr/")), 1)));
    assertTrue(r.succeeded());
    assertEquals(2, r.ranges().size());
    List<KeyValue> all = r.ranges().get(0).kvs();
    assertEquals(List.of("1", "2"), all.stream().map(KeyValue::valueString).toList());
    assertTrue(all.stream().allMatch(kv -> kv.createRevision() == r.revision()));
    assertEquals(r.revision(), r.ranges().get(0).revision());
    assertEquals(1, r.ranges().get(1).kvs().size());
    assertTrue(r.ranges().get(1).more());

    TxnResult failed = store().commit(new Txn()
        .when(Compare.absent(key("tr/a")))
        .then(Op.put(key("tr/c"), Keys.of("3")))
        .otherwise(Op.rangePrefix(key("tr/"))));
    assertFalse(failed.succeeded());
    assertEquals(2, failed.ranges().get(0).kvs().size(), "the other branch read, nothing written");
  }

  @Test
  void aProgressNoticeCoversChangesOutsideTheWatchedPrefix() throws Exception {
    BlockingQueue<Long> progress = new LinkedBlockingQueue<>();
    WatchListener listener = new WatchListener() {
      @Override
      public void onEvents(List<WatchEvent> events) {}

      @Override
      public void onError(MetaStoreException error) {}

      @Override
      public void onProgress(long revision) {
        progress.add(revision);
      }
    };
    try (Watch w = store().watch(key("quiet/"), 0, listener)) {
      long elsewhere = store().commit(new Txn().then(Op.put(key("loud"), Keys.of("x"))))
          .revision();
      long deadline = System.nanoTime() + WAIT.toNanos();
      long seen = 0;
      while (seen < elsewhere && System.nanoTime() < deadline) {
        w.requestProgress();
        Long r = progress.poll(100, TimeUnit.MILLISECONDS);
        seen = r == null ? seen : Math.max(seen, r);
      }
      assertTrue(seen >= elsewhere, "progress " + seen + " never reached " + elsewhere);
    }
  }

  @Test
  void watchesDeliverTheirPrefixInRevisionOrder() throws InterruptedException {
    RecordingWatchListener events = new RecordingWatchListener();
    // from a known revision, not "now" (see aClosedWatchDeliversNothingMore)
    long start = put("before", "0").revision() + 1;
    try (Watch w = store().watch(key("w/"), start, events)) {
      long r1 = put("w/a", "1").revision();
      put("elsewhere", "x");
      put("w/b", "2");
      long r4 = store().commit(new Txn().then(Op.deletePrefix(key("w/")))).revision();
      List<WatchEvent> seen = events.await(4, WAIT);
      assertEquals(List.of(WatchEvent.Type.PUT, WatchEvent.Type.PUT, WatchEvent.Type.DELETE,
          WatchEvent.Type.DELETE), seen.stream().map(WatchEvent::type).toList());
      assertEquals(r1, seen.get(0).kv().modRevision());
      assertEquals(r4, seen.get(3).kv().modRevision());
      assertArrayEquals(new byte[0], seen.get(3).kv().value());
      assertFalse(events.failed());
    }
  }

  @Test
  void aWatchFromAPastRevisionReplaysThenFollows() throws InterruptedException {
    long r1 = put("a", "1").revision();
    put("a", "2");
    RecordingWatchListener events = new RecordingWatchListener();
    try (Watch w = store().watch(key(""), r1, events)) {
      put("a", "3");
      List<WatchEvent> seen = events.await(3, WAIT);
      assertEquals(List.of("1", "2", "3"),
          seen.stream().map(e -> e.kv().valueString()).toList());
    }
  }

  @Test
  void aClosedWatchDeliversNothingMore() throws InterruptedException {
    // Watches from a known revision, not from "now": a watch is set up asynchronously (jetcd),
    // and a put racing its setup would be missed by one that starts wherever etcd then is.
    long start = put("before", "0").revision() + 1;
    RecordingWatchListener events = new RecordingWatchListener();
    Watch w = store().watch(key(""), start, events);
    put("a", "1");
    events.await(1, WAIT);
    w.close();
    long closed = put("a", "2").revision();
    RecordingWatchListener after = new RecordingWatchListener();
    try (Watch probe = store().watch(key(""), closed + 1, after)) {
      put("a", "3");
      after.await(1, WAIT);
    }
    assertEquals(1, events.events().size());
  }

  @Test
  void aWatchFromACompactedRevisionFailsCompacted() throws InterruptedException {
    long r1 = put("a", "1").revision();
    long r2 = put("a", "2").revision();
    compact(r2);
    RecordingWatchListener events = new RecordingWatchListener();
    try (Watch w = store().watch(key(""), r1, events)) {
      MetaStoreException error = events.awaitError(WAIT);
      assertEquals(Kind.COMPACTED, error.kind(), error.getMessage());
      assertFalse(error.getMessage().contains("\n"));
    }
  }
}

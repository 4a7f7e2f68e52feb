package io.etcfs.etcd.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.etcd.local.EtcdProcess;
import io.etcfs.spi.meta.Compare;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.MetaStoreException;
import io.etcfs.spi.meta.MetaStoreException.Kind;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.RangeResult;
import io.etcfs.spi.meta.Txn;
import io.etcfs.spi.meta.TxnResult;
import io.etcfs.spi.meta.Watch;
import io.etcfs.spi.meta.WatchEvent;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class EtcdMetaStoreTest {
  @TempDir static Path dataDir;
  private static EtcdProcess etcd;
  private static EtcdMetaStore store;

  @BeforeAll
  static void startEtcd() {
    etcd = EtcdProcess.start(dataDir, 1);
    store = EtcdMetaStore.connect(EtcdSettings.of(etcd.endpoints()));
  }

  @AfterAll
  static void stopEtcd() {
    try {
      if (store != null) {
        store.close();
      }
    } finally {
      if (etcd != null) {
        etcd.stop();
      }
    }
  }

  private static byte[] key(TestInfo test, String suffix) {
    return Keys.of("/t/" + test.getTestMethod().orElseThrow().getName() + "/" + suffix);
  }

  @Test
  void putThenGetThroughATxn(TestInfo test) {
    byte[] k = key(test, "a");
    TxnResult put = store.commit(new Txn().when(Compare.absent(k)).then(Op.put(k, Keys.of("1"))));
    assertTrue(put.succeeded());
    KeyValue kv = store.get(k).orElseThrow();
    assertEquals("1", kv.valueString());
    assertEquals(put.revision(), kv.createRevision());
    assertEquals(put.revision(), kv.modRevision());
    assertEquals(1, kv.version());
    assertTrue(store.get(key(test, "missing")).isEmpty());
  }

  /** fsck's paged snapshot: every page at the first page's revision, whatever changed since. */
  @Test
  void pagesPinnedToARevisionShowThatRevisionOnly(TestInfo test) {
    byte[] a = key(test, "a");
    byte[] b = key(test, "b");
    byte[] c = key(test, "c");
    byte[] end = Keys.prefixEnd(key(test, ""));
    store.commit(new Txn().then(Op.put(a, Keys.of("1"))).then(Op.put(b, Keys.of("1"))));
    RangeResult first = store.rangeAt(key(test, ""), end, 1, 0);
    assertTrue(first.more());
    store.commit(new Txn().then(Op.delete(b)).then(Op.put(c, Keys.of("2"))));
    RangeResult second = store.rangeAt(Keys.after(a), end, 1, first.revision());
    assertEquals("b", second.kvs().get(0).keyString().substring(key(test, "").length));
    assertEquals(first.revision(), second.revision());
    assertTrue(!second.more(), "c came later");
    assertEquals(2, store.countAt(key(test, ""), end, first.revision()));
    assertEquals(2, store.countAt(key(test, ""), end, 0));
  }

  @Test
  void failedComparesRunTheOtherBranch(TestInfo test) {
    byte[] k = key(test, "a");
    byte[] flag = key(test, "flag");
    long rev = store.commit(new Txn().then(Op.put(k, Keys.of("1")))).revision();
    TxnResult stale = store.commit(new Txn()
        .when(Compare.modRevision(k, rev - 1))
        .then(Op.put(k, Keys.of("2")))
        .otherwise(Op.put(flag, Keys.of("lost"))));
    assertFalse(stale.succeeded());
    assertEquals("1", store.get(k).orElseThrow().valueString());
    assertEquals("lost", store.get(flag).orElseThrow().valueString());
    assertTrue(store.commit(new Txn().when(Compare.value(k, Keys.of("1")))
        .then(Op.delete(k))).succeeded());
    assertTrue(store.get(k).isEmpty());
  }

  @Test
  void prefixRangeHonoursTheLimit(TestInfo test) {
    Txn txn = new Txn();
    for (int i = 0; i < 5; i++) {
      txn.then(Op.put(key(test, "k" + i), Keys.of("v" + i)));
    }
    long rev = store.commit(txn).revision();
    RangeResult page = store.prefix(key(test, ""), 3);
    assertEquals(3, page.kvs().size());
    assertTrue(page.more());
    assertEquals("v0", page.kvs().get(0).valueString());
    assertTrue(page.revision() >= rev);
    RangeResult all = store.prefix(key(test, ""), 0);
    assertEquals(5, all.kvs().size());
    assertFalse(all.more());
    store.commit(new Txn().then(Op.deletePrefix(key(test, ""))));
    assertTrue(store.prefix(key(test, ""), 0).kvs().isEmpty());
  }

  @Test
  void revokingALeaseDeletesItsKeys(TestInfo test) {
    long lease = store.grantLease(Duration.ofSeconds(10));
    byte[] k = key(test, "owned");
    store.commit(new Txn().then(Op.put(k, Keys.of("x"), lease)));
    assertEquals(lease, store.get(k).orElseThrow().lease());
    assertTrue(store.keepAliveOnce(lease) >= 9);
    store.revokeLease(lease);
    assertTrue(store.get(k).isEmpty());
    MetaStoreException e =
        assertThrows(MetaStoreException.class, () -> store.keepAliveOnce(lease));
    assertEquals(Kind.LEASE_NOT_FOUND, e.kind());
    store.revokeLease(lease);
  }

  @Test
  void putWithAMissingLeaseFails(TestInfo test) {
    MetaStoreException e = assertThrows(MetaStoreException.class,
        () -> store.commit(new Txn().then(Op.put(key(test, "k"), Keys.of("x"), 12345))));
    assertEquals(Kind.LEASE_NOT_FOUND, e.kind());
  }

  @Test
  void watchDeliversPutsAndDeletesInOrder(TestInfo test) throws Exception {
    byte[] prefix = key(test, "");
    RecordingListener events = new RecordingListener();
    try (Watch w = store.watch(prefix, 0, events)) {
      long r1 = store.commit(new Txn().then(Op.put(key(test, "a"), Keys.of("1")))).revision();
      store.commit(new Txn().then(Op.put(key(test, "b"), Keys.of("2"))));
      store.commit(new Txn().then(Op.put(Keys.of("/elsewhere"), Keys.of("x"))));
      long r4 = store.commit(new Txn().then(Op.deletePrefix(prefix))).revision();
      List<WatchEvent> seen = events.await(4);
      assertEquals(List.of(WatchEvent.Type.PUT, WatchEvent.Type.PUT, WatchEvent.Type.DELETE,
          WatchEvent.Type.DELETE), seen.stream().map(WatchEvent::type).toList());
      assertEquals(r1, seen.get(0).kv().modRevision());
      assertEquals(r4, seen.get(3).kv().modRevision());
      assertArrayEquals(new byte[0], seen.get(3).kv().value());
    }
  }

  @Test
  void watchFromAStartRevisionReplaysHistory(TestInfo test) throws Exception {
    long r1 = store.commit(new Txn().then(Op.put(key(test, "a"), Keys.of("1")))).revision();
    store.commit(new Txn().then(Op.put(key(test, "a"), Keys.of("2"))));
    RecordingListener events = new RecordingListener();
    try (Watch w = store.watch(key(test, ""), r1, events)) {
      List<WatchEvent> seen = events.await(2);
      assertEquals("1", seen.get(0).kv().valueString());
      assertEquals("2", seen.get(1).kv().valueString());
    }
  }

  @Test
  void watchFromACompactedRevisionFails(TestInfo test) throws Exception {
    long r1 = store.commit(new Txn().then(Op.put(key(test, "a"), Keys.of("1")))).revision();
    long r2 = store.commit(new Txn().then(Op.put(key(test, "a"), Keys.of("2")))).revision();
    store.compact(r2);
    RecordingListener events = new RecordingListener();
    try (Watch w = store.watch(key(test, ""), r1, events)) {
      MetaStoreException error = events.awaitError();
      assertEquals(Kind.COMPACTED, error.kind(), error.getMessage());
      assertFalse(error.getMessage().contains("\n"));
    }
  }
}

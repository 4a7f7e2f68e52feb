package io.etcfs.lock.etcd.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.etcfs.spi.lock.LockMode;
import io.etcfs.spi.lock.LockReport.ClusterLock;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.Keys;
import java.util.List;
import org.junit.jupiter.api.Test;

class LockRowsTest {
  private static final String PREFIX = "/etcfs/fs1/locks/";

  @Test
  void everyKeyIsOneRequestJudgedHeldOrQueuedInItsQueue() {
    List<KeyValue> kvs = List.of(
        kv("000000000000002a/00000000000000a1", "X node1", 10, 0xa1),
        kv("000000000000002a/00000000000000b2", "S node2", 11, 0xb2),
        kv("ffffffffffffffff/00000000000000a1", "S node1", 12, 0xa1),
        kv("not-an-inode/00", "X node1", 13, 0));
    assertEquals(List.of(
        new ClusterLock(42, LockMode.EXCLUSIVE, true, false, "node1", 10, "a1"),
        new ClusterLock(42, LockMode.SHARED, false, false, "node2", 11, "b2"),
        new ClusterLock(-1, LockMode.SHARED, true, false, "node1", 12, "a1")),
        LockRows.all(new LockKeys("fs1", "node1"), kvs), "a key that names no inode is no request");
  }

  @Test
  void recallCountsKeepTheMostRecentlyRecalledInodes() {
    RecallCounts counts = new RecallCounts(2);
    counts.served(1);
    counts.served(2);
    counts.served(1);
    counts.served(3); // 2 is the least recently recalled: it goes
    assertEquals(2, counts.of(1));
    assertEquals(0, counts.of(2));
    assertEquals(1, counts.of(3));
    counts.of(1); // a look is no recall: 1 stays the eldest
    counts.served(4);
    assertEquals(0, counts.of(1));
    assertEquals(1, counts.of(3));
  }

  private static KeyValue kv(String key, String value, long createRevision, long lease) {
    return new KeyValue(Keys.of(PREFIX + key), Keys.of(value), createRevision, createRevision, 1,
        lease);
  }
}

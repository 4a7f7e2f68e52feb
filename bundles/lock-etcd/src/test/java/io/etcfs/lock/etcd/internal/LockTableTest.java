package io.etcfs.lock.etcd.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.etcfs.lock.etcd.internal.LockTable.Request;
import io.etcfs.spi.lock.LockMode;
import org.junit.jupiter.api.Test;

class LockTableTest {
  private final LockTable t = new LockTable();

  private static Request req(long lease, long created, LockMode mode) {
    return new Request(lease, created, mode, false, created);
  }

  private Long holder(long inode) {
    Request r = t.exclusiveHolder(inode);
    return r == null ? null : r.lease();
  }

  @Test
  void theFirstRequestInCreateOrderIsTheHolder() {
    assertNull(holder(7));
    t.put(7, req(0xa, 10, LockMode.SHARED));
    t.put(7, req(0xb, 11, LockMode.EXCLUSIVE)); // queued behind a reader: not holding
    assertNull(holder(7));
    t.delete(7, 0xa, 20);
    assertEquals(0xb, holder(7));
    t.put(7, req(0xc, 12, LockMode.SHARED));
    assertEquals(0xb, holder(7), "a reader queued behind changes nothing");
    t.delete(7, 0xb, 21);
    assertNull(holder(7));
    assertNull(holder(8), "another inode");
  }

  @Test
  void aRewrittenKeyKeepsItsPlaceAndCarriesItsCleanFlag() {
    t.put(7, req(0xa, 10, LockMode.EXCLUSIVE));
    t.put(7, new Request(0xa, 10, LockMode.EXCLUSIVE, true, 15)); // declared clean at rev 15
    assertEquals(new Request(0xa, 10, LockMode.EXCLUSIVE, true, 15), t.exclusiveHolder(7));
    assertEquals(1, t.inodes());
  }

  @Test
  void theLastExclusiveReleaseIsKeptPerInode() {
    assertEquals(0, t.exclusiveGoneAt(7));
    t.put(7, req(0xa, 10, LockMode.SHARED));
    t.delete(7, 0xa, 11);
    assertEquals(0, t.exclusiveGoneAt(7), "a shared release leaves nothing to catch up to");
    t.put(7, req(0xb, 12, LockMode.EXCLUSIVE));
    t.delete(7, 0xb, 13);
    assertEquals(13, t.exclusiveGoneAt(7));
    t.put(7, req(0xc, 14, LockMode.EXCLUSIVE));
    t.delete(7, 0xc, 15);
    assertEquals(15, t.exclusiveGoneAt(7));
  }

  @Test
  void emptyQueuesAreForgottenAndClearStartsOver() {
    t.put(1, req(0xa, 5, LockMode.EXCLUSIVE));
    t.put(2, req(0xa, 6, LockMode.EXCLUSIVE));
    t.delete(1, 0xa, 30);
    t.delete(1, 0xa, 31); // twice, or a key never seen: harmless
    t.delete(3, 0xf, 32);
    assertEquals(1, t.inodes());
    t.clear();
    assertEquals(0, t.inodes());
    assertNull(holder(2));
  }
}

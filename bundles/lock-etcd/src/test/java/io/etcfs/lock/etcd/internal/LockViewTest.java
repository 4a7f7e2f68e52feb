package io.etcfs.lock.etcd.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.etcfs.lock.etcd.internal.LockView.Request;
import io.etcfs.spi.lock.LockMode;
import io.etcfs.spi.lock.LockService.Writer;
import org.junit.jupiter.api.Test;

class LockViewTest {
  private final LockView t = new LockView();

  private static Request req(long lease, long created, LockMode mode) {
    return new Request(lease, created, mode, created);
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
    t.delete(7, 0xa);
    assertEquals(0xb, holder(7));
    t.put(7, req(0xc, 12, LockMode.SHARED));
    assertEquals(0xb, holder(7), "a reader queued behind changes nothing");
    t.delete(7, 0xb);
    assertNull(holder(7));
    assertNull(holder(8), "another inode");
  }

  @Test
  void aRewrittenKeyKeepsItsPlace() {
    t.put(7, req(0xa, 10, LockMode.EXCLUSIVE));
    t.put(7, new Request(0xa, 10, LockMode.SHARED, 15)); // made shared in place at rev 15
    assertNull(t.exclusiveHolder(7));
    assertEquals(1, t.inodes());
  }

  @Test
  void emptyQueuesAreForgottenAndClearStartsOver() {
    t.put(1, req(0xa, 5, LockMode.EXCLUSIVE));
    t.put(2, req(0xa, 6, LockMode.EXCLUSIVE));
    t.delete(1, 0xa);
    t.delete(1, 0xa); // twice, or a key never seen: harmless
    t.delete(3, 0xf);
    assertEquals(1, t.inodes());
    t.rebuild();
    assertEquals(0, t.inodes());
    assertNull(holder(2));
  }

  @Test
  void aWriterElsewhereHoldsOrWaits() {
    long own = 0xf;
    assertEquals(Writer.NONE, t.writerElsewhere(7, own), "no queue");
    t.put(7, req(0xa, 10, LockMode.SHARED));
    assertEquals(Writer.NONE, t.writerElsewhere(7, own), "a reader only");
    t.put(7, req(0xb, 11, LockMode.EXCLUSIVE));
    assertEquals(Writer.WAITING, t.writerElsewhere(7, own), "behind a reader");
    t.delete(7, 0xa);
    assertEquals(Writer.HOLDING, t.writerElsewhere(7, own), "first in line");
    t.put(7, req(0xc, 14, LockMode.EXCLUSIVE));
    assertEquals(Writer.WAITING, t.writerElsewhere(7, own), "another writer waits behind it");
    assertEquals(Writer.NONE, t.writerElsewhere(8, own));
    t.put(8, req(own, 20, LockMode.EXCLUSIVE));
    assertEquals(Writer.NONE, t.writerElsewhere(8, own), "this node's own request");
  }
}

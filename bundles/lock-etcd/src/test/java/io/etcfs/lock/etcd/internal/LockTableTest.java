package io.etcfs.lock.etcd.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.etcfs.spi.lock.LockMode;
import org.junit.jupiter.api.Test;

class LockTableTest {
  private final LockTable t = new LockTable();

  @Test
  void theFirstRequestInCreateOrderIsTheHolder() {
    assertEquals(0, t.exclusiveHolder(7));
    t.put(7, 0xa, 10, LockMode.SHARED);
    t.put(7, 0xb, 11, LockMode.EXCLUSIVE); // queued behind a reader: not holding
    assertEquals(0, t.exclusiveHolder(7));
    t.delete(7, 0xa);
    assertEquals(0xb, t.exclusiveHolder(7));
    t.put(7, 0xc, 12, LockMode.SHARED);
    assertEquals(0xb, t.exclusiveHolder(7), "a reader queued behind changes nothing");
    t.delete(7, 0xb);
    assertEquals(0, t.exclusiveHolder(7));
    assertEquals(0, t.exclusiveHolder(8), "another inode");
  }

  @Test
  void emptyQueuesAreForgottenAndClearStartsOver() {
    t.put(1, 0xa, 5, LockMode.EXCLUSIVE);
    t.put(2, 0xa, 6, LockMode.EXCLUSIVE);
    t.delete(1, 0xa);
    t.delete(1, 0xa); // twice, or a key never seen: harmless
    t.delete(3, 0xf);
    assertEquals(1, t.inodes());
    t.clear();
    assertEquals(0, t.inodes());
    assertEquals(0, t.exclusiveHolder(2));
  }
}

package io.etcfs.lock.etcd.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.etcfs.lock.etcd.internal.LockView.Request;
import io.etcfs.spi.lock.LockMode;
import org.junit.jupiter.api.Test;

class LockViewTest {
  private final LockView t = new LockView();

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
    t.rebuild(40);
    assertEquals(0, t.inodes());
    assertNull(holder(2));
  }

  /**
   * A release the table never saw (it went while no watch ran) or no longer remembers (more
   * than 4096 inodes released since) is bounded by the table's rebuild or the newest release
   * forgotten: a stat there must still wait for a cache that far, never for nothing.
   */
  @Test
  void aReleaseNotRememberedIsBoundedByTheRebuildAndTheNewestForgotten() {
    assertEquals(0, t.exclusiveGoneAt(7), "never read: nothing known");
    t.rebuild(100);
    assertEquals(100, t.exclusiveGoneAt(7), "went unseen before the read at 100");
    t.put(7, req(0xa, 101, LockMode.EXCLUSIVE));
    t.delete(7, 0xa, 102);
    assertEquals(102, t.exclusiveGoneAt(7));
    for (long ino = 1000; ino < 1000 + 4096; ino++) { // 4097 inodes: 7 is forgotten
      t.put(ino, req(0xb, 200, LockMode.EXCLUSIVE));
      t.delete(ino, 0xb, 20_000 + ino);
    }
    assertEquals(20_000 + 5095, t.exclusiveGoneAt(5095), "remembered");
    assertEquals(102, t.exclusiveGoneAt(7), "forgotten: its own release bounds it still");
    assertEquals(102, t.exclusiveGoneAt(999), "never locked: the newest forgotten bounds it");
    t.put(6000, req(0xb, 300, LockMode.EXCLUSIVE));
    t.delete(6000, 0xb, 30_000); // forgets inode 1000, released at 21,000
    assertEquals(21_000, t.exclusiveGoneAt(7));
  }

  @Test
  void aWriterElsewhereIsAnyExclusiveRequestButACleanHolderAlone() {
    long own = 0xf;
    assertNull(t.writerElsewhere(7, own), "no queue");
    t.put(7, req(0xa, 10, LockMode.SHARED));
    assertNull(t.writerElsewhere(7, own), "a reader only");
    t.put(7, req(0xb, 11, LockMode.EXCLUSIVE));
    assertEquals(0xb, t.writerElsewhere(7, own).lease(), "waiting behind a reader: a writer");
    t.delete(7, 0xa, 12);
    assertEquals(0xb, t.writerElsewhere(7, own).lease(), "holding: a writer");
    Request clean = new Request(0xb, 11, LockMode.EXCLUSIVE, true, 13);
    t.put(7, clean);
    assertEquals(clean, t.writerElsewhere(7, own), "the clean holder alone");
    t.put(7, req(0xc, 14, LockMode.EXCLUSIVE));
    assertEquals(0xc, t.writerElsewhere(7, own).lease(), "a writer waiting behind a clean one");
    assertNull(t.writerElsewhere(8, own));
    t.put(8, req(own, 20, LockMode.EXCLUSIVE));
    assertNull(t.writerElsewhere(8, own), "this node's own request is not elsewhere");
  }
}

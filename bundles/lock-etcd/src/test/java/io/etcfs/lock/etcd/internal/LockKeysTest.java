package io.etcfs.lock.etcd.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.etcfs.spi.lock.LockMode;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.Keys;
import org.junit.jupiter.api.Test;

class LockKeysTest {
  private final LockKeys keys = new LockKeys("fs1", "node1");

  @Test
  void aKeyNamesItsInodeAndSessionInFixedWidthHex() {
    String key = LockKeys.str(keys.key(0x2a, 0xa1));
    assertEquals("/etcfs/fs1/locks/000000000000002a/00000000000000a1", key);
    assertEquals(new LockKeys.Parts(0x2a, 0xa1), keys.parse(key));
    assertEquals(new LockKeys.Parts(-1, 1), keys.parse(LockKeys.str(keys.key(-1, 1))),
        "unsigned");
    assertEquals("/etcfs/fs1/locks/000000000000002a/", LockKeys.str(keys.inode(0x2a)));
  }

  @Test
  void otherKeysAreNoLockKeys() {
    assertNull(keys.parse("/etcfs/fs2/locks/000000000000002a/00000000000000a1"), "another fs");
    assertNull(keys.parse("/etcfs/fs1/locks/not-an-inode/00"));
    assertNull(keys.parse("/etcfs/fs1/locks/000000000000002a"), "no session");
  }

  @Test
  void aValueNamesModeAndNode() {
    KeyValue kv = new KeyValue(keys.key(1, 2), keys.value(LockMode.EXCLUSIVE), 3, 3, 1, 2);
    assertEquals("X node1", kv.valueString());
    assertEquals(LockMode.EXCLUSIVE, LockKeys.mode(kv));
    assertEquals("node1", LockKeys.node(kv));
    assertEquals(LockMode.SHARED, LockKeys.mode(
        new KeyValue(keys.key(1, 2), Keys.of("S n"), 3, 3, 1, 2)));
  }
}

package io.etcfs.spi.fs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class KeyspaceTest {
  @Test
  void everyKeyLivesUnderTheFilesystemsRoot() {
    Keyspace k = Keyspace.of("prod");
    assertEquals("/etcfs/prod/", k.root());
    assertEquals("/etcfs/prod/locks/", k.key(Keyspace.LOCKS));
    assertEquals("/etcfs/prod/fs", new String(k.record(), StandardCharsets.UTF_8));
    assertEquals("members/n1", k.relative("/etcfs/prod/members/n1"));
    assertNull(k.relative("/etcfs/production/members/n1"));
  }

  @Test
  void aNameThatWouldLeaveItsRootIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> Keyspace.of(""));
    assertThrows(IllegalArgumentException.class, () -> Keyspace.of("a/b"));
    assertThrows(IllegalArgumentException.class, () -> Keyspace.of(null));
  }

  @Test
  void numbersAreFixedWidthHexSoKeyOrderIsNumericOrder() {
    assertEquals("00000000000000ff", Keyspace.hex(255));
    assertEquals("ffffffffffffffff", Keyspace.hex(-1));
    assertEquals("0000000a", Keyspace.hex(10, 8));
    assertEquals("fe", Keyspace.hex(254, 2));
    assertThrows(IllegalArgumentException.class, () -> Keyspace.hex(256, 2));
  }
}

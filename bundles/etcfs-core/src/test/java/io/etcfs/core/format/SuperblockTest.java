package io.etcfs.core.format;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.spi.fs.FsRecord;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class SuperblockTest {
  private final Superblock sb =
      new Superblock(UUID.randomUUID(), 4096, 64L << 20, 8L << 30, 1L << 20, "prod-fs");

  @Test
  void roundTrips() {
    assertEquals(sb, Superblock.decode(sb.encode()));
    assertEquals(127, sb.arenaCount());
  }

  @Test
  void everyFlippedByteIsDetected() {
    ByteBuffer encoded = sb.encode();
    int used = 8 + 4 + 16 + 4 + 8 + 8 + 8 + 2 + "prod-fs".length() + 4;
    for (int i = 0; i < used; i++) {
      ByteBuffer b = ByteBuffer.allocate(Superblock.SIZE).put(encoded.duplicate()).flip();
      b.put(i, (byte) (b.get(i) ^ 0x40));
      assertThrows(IllegalArgumentException.class, () -> Superblock.decode(b), "byte " + i);
    }
  }

  @Test
  void zeroesAreNoSuperblock() {
    ByteBuffer zero = ByteBuffer.allocate(Superblock.SIZE);
    assertFalse(Superblock.hasMagic(zero));
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> Superblock.decode(zero));
    assertEquals("no etcfs superblock (wrong magic)", e.getMessage());
    assertTrue(Superblock.hasMagic(sb.encode()));
  }

  @Test
  void nameIsBounded() {
    assertThrows(IllegalArgumentException.class,
        () -> new Superblock(UUID.randomUUID(), 4096, 1 << 26, 1L << 30, 1 << 20, ""));
    assertThrows(IllegalArgumentException.class,
        () -> new Superblock(UUID.randomUUID(), 4096, 1 << 26, 1L << 30, 1 << 20, "x".repeat(65)));
  }

  @Test
  void aFilesystemOfAnEarlierFormatIsRefusedWithItsVersion() {
    ByteBuffer b = ByteBuffer.allocate(Superblock.SIZE).put(sb.encode()).flip();
    b.putInt(8, 1); // format version 1: ownership records keyed by arena
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> Superblock.decode(b));
    assertEquals("formatted with etcfs format version 1; this etcfs reads version 2 only (format "
        + "it again)", e.getMessage());
  }

  @Test
  void theRecordHoldsTheSameGeometry() {
    FsRecord r = sb.record("etcd", "arena", Instant.parse("2026-11-29T20:00:00Z"));
    assertEquals(127, r.arenas());
    assertEquals(sb, Superblock.of(FsRecord.decode(r.encode())));
  }
}

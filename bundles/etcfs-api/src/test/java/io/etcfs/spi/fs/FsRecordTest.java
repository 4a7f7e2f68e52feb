package io.etcfs.spi.fs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class FsRecordTest {
  private final FsRecord r = new FsRecord(UUID.randomUUID(), "prod-fs", 4096, 64L << 20, 8L << 30,
      1L << 20, 127, "etcd", "arena", Instant.parse("2026-11-29T20:00:00Z"));

  @Test
  void roundTripsAsReadableText() {
    assertEquals(r, FsRecord.decode(r.encode()));
    String text = new String(r.encode(), StandardCharsets.UTF_8);
    assertEquals(true, text.contains("lockBackend=etcd"), text);
    assertEquals(256, r.firstBlock());
    assertEquals(16384, r.blocksPerArena());
  }

  @Test
  void aMissingFieldIsNamed() {
    String broken = new String(r.encode(), StandardCharsets.UTF_8).replaceAll("(?m)^uuid=.*$", "");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> FsRecord.decode(broken.getBytes(StandardCharsets.UTF_8)));
    assertEquals("corrupt filesystem record in etcd: missing field 'uuid'", e.getMessage());
  }

  @Test
  void anImpossibleGeometryIsRefused() {
    String broken = new String(r.encode(), StandardCharsets.UTF_8)
        .replaceAll("(?m)^arenaSize=.*$", "arenaSize=1000");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> FsRecord.decode(broken.getBytes(StandardCharsets.UTF_8)));
    assertEquals("corrupt filesystem record in etcd: impossible geometry: blockSize 4096, "
        + "arenaSize 1000, deviceSize 8589934592, dataStart 1048576, arenas 127", e.getMessage());
  }
}

package io.etcfs.spi.alloc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.etcfs.spi.fs.Keyspace;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class BlockOwnerTest {
  private final Keyspace space = Keyspace.of("fs1");

  @Test
  void aRecordRoundTripsThroughItsKeyAndValue() {
    BlockOwner o = new BlockOwner(0x1234, 40, 0xabc);
    assertEquals("/etcfs/fs1/blocks/0000000000001234",
        new String(o.key(space), StandardCharsets.UTF_8));
    assertEquals("0000000000000abc:40", new String(o.value(), StandardCharsets.UTF_8));
    assertEquals(o, BlockOwner.decode(space, o.key(space), o.value()));
    assertEquals(0x1234 + 40, o.end());
  }

  @Test
  void anythingElseIsNoRecord() {
    byte[] value = "0000000000000abc:40".getBytes(StandardCharsets.UTF_8);
    assertNull(BlockOwner.decode(space, space.bytes("blocks/00000001/0000000000001234"), value));
    assertNull(BlockOwner.decode(Keyspace.of("fs2"), BlockOwner.key(space, 1), value));
    assertNull(BlockOwner.of(1, "abc".getBytes(StandardCharsets.UTF_8)));
    assertNull(BlockOwner.of(1, "0abc:0".getBytes(StandardCharsets.UTF_8)));
    assertNull(BlockOwner.of(1, "zz:4".getBytes(StandardCharsets.UTF_8)));
    assertEquals(-1, BlockOwner.startOf(space, space.bytes("arenas/00000001")));
  }
}

package io.etcfs.alloc.arena.internal;

import io.etcfs.spi.alloc.BlockOwner;
import java.nio.charset.StandardCharsets;

/**
 * One reverse-map entry: the extent starting at its key's block belongs to inode {@code ino}.
 * Stored as the API's block ownership record ({@link BlockOwner}) says.
 */
record Ref(long ino, long length) {
  String encode() {
    return new String(new BlockOwner(0, length, ino).value(), StandardCharsets.UTF_8);
  }

  /** Null if the value is not a reverse-map entry (never trusted to be well formed). */
  static Ref decode(String value) {
    BlockOwner o = BlockOwner.of(0, value.getBytes(StandardCharsets.UTF_8));
    return o == null ? null : new Ref(o.inode(), o.length());
  }
}

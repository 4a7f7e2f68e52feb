package io.etcfs.spi.alloc;

import io.etcfs.spi.fs.Keyspace;
import java.nio.charset.StandardCharsets;

/**
 * The block ownership record (1.4): which inode references an allocated extent. Every allocator
 * writes one key per extent a commit references, through {@link Allocator#commitOps} in the
 * transaction that commits the inode's extent map, and deletes it in the commit that releases
 * the extent — so allocation state can be rebuilt from committed metadata, and a tool (status,
 * recovery, a check) reads it without knowing which allocator wrote it. Key {@code
 * blocks/<start block, 16 hex>}: key order is block order, so the records of any block range
 * (an arena, say) are one contiguous key range. Value {@code <inode, 16 hex>:<length in
 * blocks>}. Records never overlap.
 *
 * @param start the first device block
 * @param length blocks, at least 1
 * @param inode the inode that references them
 */
public record BlockOwner(long start, long length, long inode) {
  public BlockOwner {
    if (start < 0 || length <= 0) {
      throw new IllegalArgumentException("not an extent: " + start + "+" + length);
    }
  }

  /** The first block after the extent. */
  public long end() {
    return start + length;
  }

  /** The key of the record of an extent starting at {@code start}. */
  public static byte[] key(Keyspace space, long start) {
    return space.bytes(Keyspace.BLOCKS + Keyspace.hex(start));
  }

  /** Where every record lies: a key prefix. */
  public static byte[] prefix(Keyspace space) {
    return space.bytes(Keyspace.BLOCKS);
  }

  public byte[] key(Keyspace space) {
    return key(space, start);
  }

  public byte[] value() {
    return (Keyspace.hex(inode) + ":" + length).getBytes(StandardCharsets.UTF_8);
  }

  /** The start block a record's key names, or -1 if the key is not a record's. */
  public static long startOf(Keyspace space, byte[] key) {
    String k = new String(key, StandardCharsets.UTF_8);
    String p = space.key(Keyspace.BLOCKS);
    if (!k.startsWith(p) || k.length() != p.length() + 16) {
      return -1;
    }
    try {
      long start = Long.parseUnsignedLong(k.substring(p.length()), 16);
      return start < 0 ? -1 : start;
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /**
   * A record read from the store, or null if the key or the value is not one (never trusted to
   * be well formed).
   */
  public static BlockOwner decode(Keyspace space, byte[] key, byte[] value) {
    long start = startOf(space, key);
    return start < 0 ? null : of(start, value);
  }

  /** The record of the extent at {@code start} with a stored value, or null if it is not one. */
  public static BlockOwner of(long start, byte[] value) {
    String v = new String(value, StandardCharsets.UTF_8);
    int colon = v.indexOf(':');
    if (start < 0 || colon <= 0) {
      return null;
    }
    try {
      long inode = Long.parseUnsignedLong(v.substring(0, colon), 16);
      long length = Long.parseLong(v.substring(colon + 1).trim());
      return length > 0 ? new BlockOwner(start, length, inode) : null;
    } catch (NumberFormatException e) {
      return null;
    }
  }
}

package io.etcfs.alloc.arena.internal;

import io.etcfs.spi.alloc.BlockOwner;
import io.etcfs.spi.fs.Keyspace;
import io.etcfs.spi.meta.Keys;
import java.nio.charset.StandardCharsets;

/**
 * The keys alloc-arena uses under {@code /etcfs/<fs>/}: {@code arenas/<arena, 8 hex>} (claims)
 * and {@code wants/<node>} (a node out of space asking the others for arenas), its own; and the
 * block ownership records every allocator keeps, {@code blocks/<start block, 16 hex>} (the
 * API's {@link BlockOwner}: the reverse map). Fixed-width hex keeps etcd's byte order equal to
 * numeric order, so the records of one arena's blocks, or of its blocks up to a block number,
 * are one contiguous key range.
 */
final class ArenaKeys {
  private final Keyspace space;
  private final String claims;
  private final String wants;

  ArenaKeys(String fsName) {
    this.space = Keyspace.of(fsName);
    this.claims = space.key(Keyspace.ARENAS);
    this.wants = space.key(Keyspace.WANTS);
  }

  byte[] record() {
    return space.record();
  }

  byte[] claimsPrefix() {
    return Keys.of(claims);
  }

  byte[] claim(int arena) {
    return Keys.of(claims + Keyspace.hex(arena, 8));
  }

  /** Every block ownership record ({@link BlockOwner}). */
  byte[] blocksPrefix() {
    return BlockOwner.prefix(space);
  }

  /** The key of the ownership record of an extent starting at {@code start}. */
  byte[] block(long start) {
    return BlockOwner.key(space, start);
  }

  /** The start block of an ownership record's key, or -1 for any other key. */
  long blockStart(byte[] key) {
    return BlockOwner.startOf(space, key);
  }

  byte[] wantsPrefix() {
    return Keys.of(wants);
  }

  byte[] want(String node) {
    return Keys.of(wants + node);
  }

  /** The node asking in a want key, or null for anything else. */
  String wantNode(byte[] key) {
    String k = new String(key, StandardCharsets.UTF_8);
    String p = wants;
    return k.startsWith(p) && k.length() > p.length() ? k.substring(p.length()) : null;
  }

  /** The arena of a claim key, or -1. */
  int claimArena(byte[] key) {
    String k = new String(key, StandardCharsets.UTF_8);
    String p = claims;
    if (!k.startsWith(p) || k.length() != p.length() + 8) {
      return -1;
    }
    return parseHex(k.substring(p.length()));
  }

  private static int parseHex(String s) {
    try {
      long v = Long.parseLong(s, 16);
      return v > Integer.MAX_VALUE ? -1 : (int) v;
    } catch (NumberFormatException e) {
      return -1;
    }
  }
}

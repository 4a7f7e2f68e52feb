package io.etcfs.alloc.arena.internal;

import io.etcfs.spi.fs.Keyspace;
import io.etcfs.spi.meta.Keys;
import java.nio.charset.StandardCharsets;

/**
 * The keys alloc-arena owns under {@code /etcfs/<fs>/}: {@code arenas/<arena, 8 hex>} (claims),
 * {@code blocks/<arena, 8 hex>/<start block, 16 hex>} (the reverse map) and {@code
 * wants/<node>} (a node out of space asking the others for arenas). Fixed-width hex
 * keeps etcd's byte order equal to numeric order, so a range read of one arena's blocks up to a
 * block number is one contiguous key range.
 */
final class ArenaKeys {
  /** A parsed reverse-map key. */
  record BlockKey(int arena, long start) {}

  private final Keyspace space;
  private final String claims;
  private final String blocks;
  private final String wants;

  ArenaKeys(String fsName) {
    this.space = Keyspace.of(fsName);
    this.claims = space.key(Keyspace.ARENAS);
    this.blocks = space.key(Keyspace.BLOCKS);
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

  byte[] blocksPrefix() {
    return Keys.of(blocks);
  }

  byte[] arenaBlocks(int arena) {
    return Keys.of(blocks + Keyspace.hex(arena, 8) + "/");
  }

  byte[] block(int arena, long start) {
    return Keys.of(blocks + Keyspace.hex(arena, 8) + "/" + Keyspace.hex(start));
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

  /** A reverse-map key parsed, or null for anything else under {@code blocks/}. */
  BlockKey blockKey(byte[] key) {
    String k = new String(key, StandardCharsets.UTF_8);
    String p = blocks;
    if (!k.startsWith(p) || k.length() != p.length() + 8 + 1 + 16
        || k.charAt(p.length() + 8) != '/') {
      return null;
    }
    int arena = parseHex(k.substring(p.length(), p.length() + 8));
    try {
      long start = Long.parseUnsignedLong(k.substring(p.length() + 9), 16);
      return arena < 0 ? null : new BlockKey(arena, start);
    } catch (NumberFormatException e) {
      return null;
    }
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

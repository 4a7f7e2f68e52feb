package io.etcfs.core.fs.meta;

import io.etcfs.spi.vfs.DirEntry;
import java.nio.charset.StandardCharsets;

/**
 * The 63-bit hash of a name that orders directory entries and serves as their readdir cookie:
 * a cookie stays valid whatever else is added or removed, unlike a position.
 */
public final class NameHash {
  private NameHash() {}

  public static long of(String name) {
    long h = 0xcbf29ce484222325L;
    for (byte b : name.getBytes(StandardCharsets.UTF_8)) {
      h ^= b & 0xff;
      h *= 0x100000001b3L;
    }
    // FNV-1a spreads the low bits poorly for short names; a murmur finaliser mixes them.
    h ^= h >>> 33;
    h *= 0xff51afd7ed558ccdL;
    h ^= h >>> 33;
    long r = h & Long.MAX_VALUE;
    // front ends use cookies 0, 1 and 2 for the start, "." and ".." (DirEntry.FIRST_COOKIE)
    return r < DirEntry.FIRST_COOKIE ? r + DirEntry.FIRST_COOKIE : r;
  }
}

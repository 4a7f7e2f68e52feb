package io.etcfs.spi.meta;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/** Helpers for the byte keys of a {@link MetaStore}. */
public final class Keys {
  private Keys() {}

  public static byte[] of(String key) {
    return key.getBytes(StandardCharsets.UTF_8);
  }

  /**
   * The smallest key greater than {@code key}: the exclusive end of a range holding exactly that
   * key, or where a paged read resumes after it.
   */
  public static byte[] after(byte[] key) {
    return Arrays.copyOf(key, key.length + 1);
  }

  /**
   * The smallest key greater than every key that starts with {@code prefix}: the exclusive end of
   * a prefix range. An empty array means "no end" (the prefix was all 0xff bytes).
   */
  public static byte[] prefixEnd(byte[] prefix) {
    byte[] end = Arrays.copyOf(prefix, prefix.length);
    for (int i = end.length - 1; i >= 0; i--) {
      if (end[i] != (byte) 0xff) {
        end[i]++;
        return Arrays.copyOf(end, i + 1);
      }
    }
    return new byte[0];
  }
}

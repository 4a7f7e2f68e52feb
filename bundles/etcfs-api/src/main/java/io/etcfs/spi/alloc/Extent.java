package io.etcfs.spi.alloc;

/**
 * A run of contiguous device blocks.
 *
 * @param start the first block number on the device
 * @param length the number of blocks (at least 1)
 */
public record Extent(long start, long length) {
  public Extent {
    if (start < 0 || length < 1) {
      throw new IllegalArgumentException("bad extent " + start + "+" + length);
    }
  }

  public long end() {
    return start + length;
  }
}

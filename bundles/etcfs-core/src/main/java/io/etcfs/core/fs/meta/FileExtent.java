package io.etcfs.core.fs.meta;

import io.etcfs.spi.alloc.Extent;

/**
 * One run of a file's blocks on the device.
 *
 * @param fileBlock the first file block it maps
 * @param deviceBlock the device block that holds it
 * @param length blocks (at least 1)
 */
public record FileExtent(long fileBlock, long deviceBlock, long length) {
  public FileExtent {
    if (fileBlock < 0 || deviceBlock < 0 || length < 1) {
      throw new IllegalArgumentException(
          "bad extent " + fileBlock + "->" + deviceBlock + "+" + length);
    }
  }

  public long fileEnd() {
    return fileBlock + length;
  }

  public Extent device() {
    return new Extent(deviceBlock, length);
  }

  /** The part of this extent inside file blocks [from, to), or null. */
  public FileExtent slice(long from, long to) {
    long s = Math.max(from, fileBlock);
    long e = Math.min(to, fileEnd());
    return s >= e ? null : new FileExtent(s, deviceBlock + (s - fileBlock), e - s);
  }
}

package io.etcfs.spi.blockdev;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.osgi.annotation.versioning.ProviderType;

/**
 * The shared device, addressed in bytes. Implementations read and write with positional I/O
 * (no shared file position), so any number of threads may use one device at once.
 */
@ProviderType
public interface BlockDevice extends AutoCloseable {
  /** The device's size in bytes. */
  long size();

  /** Reads up to {@code dst.remaining()} bytes at {@code offset}; returns the bytes read. */
  int read(ByteBuffer dst, long offset) throws IOException;

  /** Writes all of {@code src} at {@code offset}. */
  void write(ByteBuffer src, long offset) throws IOException;

  /** Makes every completed write durable on the device. */
  void flush() throws IOException;

  @Override
  void close() throws IOException;
}

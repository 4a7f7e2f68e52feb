package io.etcfs.core.device;

import io.etcfs.spi.blockdev.BlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A block device backed by a device node or an image file, with positional I/O on one channel
 * (FileChannel's positional read and write are safe from many threads at once).
 */
public final class FileBlockDevice implements BlockDevice {
  private final FileChannel channel;
  private final long size;

  private FileBlockDevice(FileChannel channel, long size) {
    this.channel = channel;
    this.size = size;
  }

  /** Opens an existing device or image for reading and writing. */
  public static FileBlockDevice open(Path path) throws IOException {
    FileChannel ch = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE);
    return new FileBlockDevice(ch, sizeOf(ch));
  }

  /** Opens a device or image read-only. */
  public static FileBlockDevice openReadOnly(Path path) throws IOException {
    FileChannel ch = FileChannel.open(path, StandardOpenOption.READ);
    return new FileBlockDevice(ch, sizeOf(ch));
  }

  /**
   * The size of a block device node is not its channel size (0 for /dev nodes on some kernels),
   * so seek to the end, which works for both nodes and files.
   */
  private static long sizeOf(FileChannel ch) throws IOException {
    long s = ch.size();
    return s > 0 ? s : ch.position(0).size();
  }

  @Override
  public long size() {
    return size;
  }

  @Override
  public int read(ByteBuffer dst, long offset) throws IOException {
    int total = 0;
    while (dst.hasRemaining()) {
      int n = channel.read(dst, offset + total);
      if (n < 0) {
        break;
      }
      total += n;
    }
    return total;
  }

  @Override
  public void write(ByteBuffer src, long offset) throws IOException {
    long pos = offset;
    while (src.hasRemaining()) {
      pos += channel.write(src, pos);
    }
  }

  @Override
  public void flush() throws IOException {
    channel.force(false);
  }

  @Override
  public void close() throws IOException {
    channel.close();
  }
}

package io.etcfs.fencing.internal;

import io.etcfs.spi.blockdev.DeviceLayout;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The heartbeat slots of the shared device, opened by the fencing bundle on its own.
 *
 * <p>On a block device the slots are read and written with O_DIRECT: another machine's writes
 * reach this one only through the device, and a read served from this machine's page cache would
 * show a heartbeat long stopped as fresh — or a live one as stopped. An image file (a local test
 * cluster) has one page cache for every node on the machine, so plain I/O is coherent there, and
 * O_DIRECT is not offered by every filesystem (tmpfs).
 */
final class HeartbeatDevice implements Closeable {
  private static final int S_IFMT = 0170000;
  private static final int S_IFBLK = 0060000;

  private final Path path;
  private final FileChannel channel;
  private final boolean direct;

  private HeartbeatDevice(Path path, FileChannel channel, boolean direct) {
    this.path = path;
    this.channel = channel;
    this.direct = direct;
  }

  static HeartbeatDevice open(Path path) throws IOException {
    boolean block = isBlockDevice(path);
    List<OpenOption> options = new ArrayList<>(List.of(StandardOpenOption.READ,
        StandardOpenOption.WRITE, StandardOpenOption.DSYNC));
    if (block) {
      options.add(com.sun.nio.file.ExtendedOpenOption.DIRECT);
    }
    return new HeartbeatDevice(path,
        FileChannel.open(path, options.toArray(new OpenOption[0])), block);
  }

  private static boolean isBlockDevice(Path path) throws IOException {
    Object mode = Files.getAttribute(path, "unix:mode");
    return mode instanceof Integer m && (m & S_IFMT) == S_IFBLK;
  }

  boolean direct() {
    return direct;
  }

  Optional<Beat> read(int slot) throws IOException {
    ByteBuffer block = buffer();
    long at = DeviceLayout.heartbeatSlot(slot);
    while (block.hasRemaining()) {
      if (channel.read(block, at + block.position()) < 0) {
        throw new IOException(path + " ends inside heartbeat slot " + slot);
      }
    }
    return Beat.decode(block);
  }

  /** Writes one beat with one aligned 4 KiB write, durable when it returns (O_DSYNC). */
  void write(int slot, Beat beat) throws IOException {
    ByteBuffer block = buffer();
    beat.encode(block);
    block.clear();
    long at = DeviceLayout.heartbeatSlot(slot);
    while (block.hasRemaining()) {
      channel.write(block, at + block.position());
    }
  }

  private static ByteBuffer buffer() {
    return ByteBuffer.allocateDirect(2 * Beat.SIZE).alignedSlice(Beat.SIZE).slice(0, Beat.SIZE);
  }

  @Override
  public void close() throws IOException {
    channel.close();
  }

  @Override
  public String toString() {
    return path + (direct ? " (O_DIRECT)" : "");
  }
}

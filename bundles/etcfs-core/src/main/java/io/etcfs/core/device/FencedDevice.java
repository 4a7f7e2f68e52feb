package io.etcfs.core.device;

import io.etcfs.spi.blockdev.BlockDevice;
import io.etcfs.spi.fencing.Membership;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * The device as the filesystem engine sees it: once this node is fenced — its membership deadline
 * passed or it left — every read, write and flush fails, so a node cut off from etcd stops
 * touching the device at its own deadline, before etcd expires its lease and survivors start
 * recovering its arenas. {@link Membership#isFenced()} checks the deadline on the monotonic
 * clock at every call, so a stalled keep-alive thread does not delay this.
 *
 * <p>What this cannot stop: a write that passed the check and is then delayed (the process paused
 * between the check and the system call, or the write queued in the kernel). Recovery's grace
 * period covers ordinary delays; only a device-level fence (persistent reservations) covers an
 * arbitrary pause. docs/ARCHITECTURE.md, failure model.
 */
public final class FencedDevice implements BlockDevice {
  private final BlockDevice device;
  private final Membership membership;

  public FencedDevice(BlockDevice device, Membership membership) {
    this.device = device;
    this.membership = membership;
  }

  @Override
  public long size() {
    return device.size();
  }

  @Override
  public int read(ByteBuffer dst, long offset) throws IOException {
    check();
    return device.read(dst, offset);
  }

  @Override
  public void write(ByteBuffer src, long offset) throws IOException {
    check();
    device.write(src, offset);
  }

  @Override
  public void flush() throws IOException {
    check();
    device.flush();
  }

  @Override
  public void close() throws IOException {
    device.close();
  }

  private void check() throws IOException {
    if (membership.isFenced()) {
      throw new IOException("node " + membership.nodeName() + " (generation "
          + membership.generation() + ") is fenced: device I/O stopped");
    }
  }
}

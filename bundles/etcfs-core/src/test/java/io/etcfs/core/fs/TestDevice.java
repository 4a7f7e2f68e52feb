package io.etcfs.core.fs;

import io.etcfs.spi.blockdev.BlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;

/** A device whose writes a test can hold up ({@link #hold}) or make fail ({@link #failWrites}). */
final class TestDevice implements BlockDevice {
  private final BlockDevice device;
  private volatile Semaphore gate;
  /** Writes waiting at the gate now. */
  final AtomicInteger waiting = new AtomicInteger();
  /** The next this many writes fail with an IOException. */
  final AtomicInteger failWrites = new AtomicInteger();

  TestDevice(BlockDevice device) {
    this.device = device;
  }

  /** From now on every write waits until {@link #release} (or fails if asked to). */
  void hold() {
    gate = new Semaphore(0);
  }

  /** Lets every held and later write through. */
  void release() {
    Semaphore g = gate;
    gate = null;
    if (g != null) {
      g.release(Integer.MAX_VALUE / 2);
    }
  }

  @Override
  public long size() {
    return device.size();
  }

  @Override
  public int read(ByteBuffer dst, long offset) throws IOException {
    return device.read(dst, offset);
  }

  @Override
  public void write(ByteBuffer src, long offset) throws IOException {
    Semaphore g = gate;
    if (g != null) {
      waiting.incrementAndGet();
      try {
        g.acquireUninterruptibly();
      } finally {
        waiting.decrementAndGet();
      }
    }
    if (failWrites.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
      throw new IOException("test device: write refused");
    }
    device.write(src, offset);
  }

  @Override
  public void flush() throws IOException {
    device.flush();
  }

  @Override
  public void close() throws IOException {
    release();
    device.close();
  }
}

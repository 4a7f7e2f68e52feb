package io.etcfs.core.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Direct I/O (what a shared block device gets) must read and write exactly what buffered I/O
 * does, at any offset and length and from any buffer: random operations against a byte array.
 * The test directory is on a filesystem with O_DIRECT (the project's machines use ext4).
 */
@Timeout(60)
class FileBlockDeviceTest {
  private static final int SIZE = 3 << 20;
  @TempDir Path dir;

  @Test
  void directIoMatchesAByteArrayAtEveryOffsetAndLength() throws IOException {
    Path image = dir.resolve("d.img");
    try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "rw")) {
      f.setLength(SIZE);
    }
    byte[] model = new byte[SIZE];
    Random random = new Random(20261130);
    try (FileBlockDevice d = FileBlockDevice.open(image, true, false)) {
      assertTrue(d.direct());
      assertEquals(SIZE, d.size());
      for (int i = 0; i < 400; i++) {
        int len = random.nextBoolean() ? 4096 * (1 + random.nextInt(300))
            : random.nextInt(20_000) + 1;
        long off = random.nextBoolean() ? 4096L * random.nextInt(SIZE / 4096)
            : random.nextInt(SIZE);
        len = (int) Math.min(len, SIZE - off);
        ByteBuffer buf = random.nextBoolean() ? ByteBuffer.allocate(len + 3).position(3).slice()
            : ByteBuffer.allocateDirect(len + 5).position(5).slice();
        if (random.nextInt(3) == 0) {
          byte[] data = new byte[len];
          random.nextBytes(data);
          buf.put(data).flip();
          d.write(buf, off);
          assertFalse(buf.hasRemaining());
          System.arraycopy(data, 0, model, (int) off, len);
        } else {
          int n = d.read(buf, off);
          assertEquals(len, n);
          byte[] got = new byte[len];
          buf.flip().get(got);
          byte[] want = new byte[len];
          System.arraycopy(model, (int) off, want, 0, len);
          assertArrayEquals(want, got, "read of " + len + " at " + off);
        }
      }
      ByteBuffer pastEnd = ByteBuffer.allocate(8192);
      assertEquals(4096, d.read(pastEnd, SIZE - 4096), "a read past the end stops at the end");
      d.flush();
    }
    try (FileBlockDevice buffered = FileBlockDevice.open(image, false, true)) {
      ByteBuffer all = ByteBuffer.allocate(SIZE);
      buffered.read(all, 0);
      assertArrayEquals(model, all.array(), "what direct I/O wrote, as buffered I/O sees it");
    }
  }

  /**
   * An interrupt of a thread in its device I/O closes a FileChannel for every thread; the device
   * opens it again and the I/O goes through, so a plug-in stopping its threads (Hazelcast's
   * recall threads at a lock-backend switch) does not cost the node its device.
   */
  @Test
  void anInterruptedThreadsIoGoesThroughAndTheDeviceStaysOpen() throws Exception {
    Path image = dir.resolve("i.img");
    try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "rw")) {
      f.setLength(1 << 20);
    }
    for (boolean direct : new boolean[] {false, true}) {
      try (FileBlockDevice d = FileBlockDevice.open(image, direct, false)) {
        byte[] data = new byte[4096];
        java.util.Arrays.fill(data, (byte) (direct ? 7 : 9));
        Thread.currentThread().interrupt();
        try {
          d.write(ByteBuffer.wrap(data), 8192);
          assertTrue(Thread.currentThread().isInterrupted(), "the interrupt is kept");
        } finally {
          Thread.interrupted();
        }
        ByteBuffer back = ByteBuffer.allocate(4096);
        Thread t = new Thread(() -> {
          try {
            d.read(back, 8192);
          } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
          }
        });
        t.start();
        t.join();
        assertArrayEquals(data, back.array(), "direct " + direct);
      }
    }
  }
}

package io.etcfs.core.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.etcfs.spi.fencing.Membership;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FencedDeviceTest {
  @TempDir Path dir;

  @Test
  void oncePassedItsDeadlineTheNodeNeitherReadsNorWritesNorFlushes() throws IOException {
    Path image = dir.resolve("d.img");
    try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "rw")) {
      f.setLength(1 << 20);
    }
    AtomicBoolean fenced = new AtomicBoolean();
    try (FencedDevice d = new FencedDevice(FileBlockDevice.open(image), member(fenced))) {
      d.write(ByteBuffer.wrap(new byte[] {7}), 4096);
      d.flush();
      ByteBuffer one = ByteBuffer.allocate(1);
      assertEquals(1, d.read(one, 4096));
      assertEquals(7, one.get(0));

      fenced.set(true);

      String why = "node n1 (generation 42) is fenced: device I/O stopped";
      assertEquals(why, assertThrows(IOException.class,
          () -> d.write(ByteBuffer.wrap(new byte[] {9}), 4096)).getMessage());
      assertEquals(why, assertThrows(IOException.class, d::flush).getMessage());
      assertEquals(why, assertThrows(IOException.class,
          () -> d.read(ByteBuffer.allocate(1), 4096)).getMessage());
    }
    try (FileBlockDevice raw = FileBlockDevice.open(image)) {
      ByteBuffer one = ByteBuffer.allocate(1);
      raw.read(one, 4096);
      assertEquals(7, one.get(0), "the refused write did not reach the device");
    }
  }

  private static Membership member(AtomicBoolean fenced) {
    return new Membership() {
      @Override
      public String nodeName() {
        return "n1";
      }

      @Override
      public byte[] memberKey() {
        return new byte[0];
      }

      @Override
      public long generation() {
        return 42;
      }

      @Override
      public boolean isFenced() {
        return fenced.get();
      }

      @Override
      public CompletionStage<Void> done() {
        return new CompletableFuture<>();
      }
    };
  }
}

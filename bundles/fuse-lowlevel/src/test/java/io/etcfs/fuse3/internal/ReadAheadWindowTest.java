package io.etcfs.fuse3.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@link ReadAheadWindow} against a directory laid out like /sys/class/bdi. */
@Timeout(30)
class ReadAheadWindowTest {
  @TempDir Path sysfs;

  @Test
  void writesTheWindowOfTheMountsDevice() throws IOException {
    Path bdi = Files.createDirectories(sysfs.resolve("0:52"));
    Files.writeString(bdi.resolve("read_ahead_kb"), "128\n");
    ReadAheadWindow.apply(sysfs, "0:52", 1024, Path.of("/mnt/x"));
    assertEquals("1024", Files.readString(bdi.resolve("read_ahead_kb")));
  }

  @Test
  void aDeviceThatIsNotANumberIsRefusedAndNothingIsWritten() throws IOException {
    IOException e = assertThrows(IOException.class,
        () -> ReadAheadWindow.apply(sysfs, "../etc", 1024, Path.of("/mnt/x")));
    assertTrue(e.getMessage().contains("not a device number"), e.getMessage());
    try (var files = Files.list(sysfs)) {
      assertEquals(0, files.count());
    }
  }

  @Test
  void aWindowThatCannotBeWrittenIsLeftAsItWas() throws IOException {
    // no such bdi directory: the write fails and nothing is created
    assertThrows(IOException.class,
        () -> ReadAheadWindow.apply(sysfs, "0:99", 1024, Path.of("/mnt/x")));
    assertFalse(Files.exists(sysfs.resolve("0:99")));
  }
}

package io.etcfs.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A full device on a real mount: writing past the end fails with ENOSPC, what was written and
 * synced before stays intact, and after a delete the space can be used again.
 */
@Timeout(600)
class EnospcIT {
  @TempDir static Path tmp;
  static LocalCluster cluster;

  @BeforeAll
  static void up() throws Exception {
    // 1 MiB of superblock and heartbeats plus three 64 MiB arenas.
    cluster = LocalCluster.up(tmp, 1, "200M");
  }

  @AfterAll
  static void down() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void aFullDeviceSaysEnospcCorruptsNothingAndRecovers() throws Exception {
    Path mnt = cluster.mount(1);
    byte[] keep = new byte[8 << 20];
    new Random(1).nextBytes(keep);
    Path kept = mnt.resolve("kept");
    try (FileChannel ch = FileChannel.open(kept, StandardOpenOption.CREATE,
        StandardOpenOption.WRITE)) {
      ch.write(ByteBuffer.wrap(keep));
      ch.force(true);
    }

    Path filler = mnt.resolve("filler");
    IOException full = assertThrows(IOException.class, () -> fill(filler));
    assertTrue(String.valueOf(full.getMessage()).contains("No space left on device"),
        "expected ENOSPC, got " + full);
    assertTrue(java.util.Arrays.equals(keep, Files.readAllBytes(kept)),
        "a synced file changed when the device filled up");

    Files.delete(filler);
    Path again = mnt.resolve("again");
    try (FileChannel ch = FileChannel.open(again, StandardOpenOption.CREATE,
        StandardOpenOption.WRITE)) {
      ch.write(ByteBuffer.allocate(32 << 20));
      ch.force(true);
    }
    assertEquals(32L << 20, Files.size(again));
    Distribution.Result st = cluster.etcfs("status", "--dir", cluster.dir().toString());
    assertTrue(st.out().contains("40.0 MiB used"), st.toString());
  }

  /** Writes 1 MiB blocks with an fsync every 16 MiB until the device refuses. */
  private static void fill(Path f) throws IOException {
    byte[] block = new byte[1 << 20];
    try (FileChannel ch = FileChannel.open(f, StandardOpenOption.CREATE,
        StandardOpenOption.WRITE)) {
      for (int i = 0; i < 1024; i++) {
        ch.write(ByteBuffer.wrap(block));
        if (i % 16 == 15) {
          ch.force(true);
        }
      }
      ch.force(true);
    }
  }
}

package io.etcfs.fuse.internal;

import io.etcfs.fuse.common.MountInfo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Mounting refuses with one line; unmounting is bounded and leaves nothing behind. */
@Timeout(90)
class MountLifecycleTest {
  @TempDir Path tmp;

  private static IllegalStateException refused(Path dir) {
    IllegalStateException e =
        assertThrows(IllegalStateException.class, () -> TestMount.mount(new MemoryVfs(), dir, true));
    assertEquals(1, e.getMessage().lines().count(), e.getMessage());
    assertTrue(e.getMessage().startsWith("cannot mount etcfs at " + dir), e.getMessage());
    return e;
  }

  @Test
  void refusesAMissingMountpoint() {
    assertTrue(refused(tmp.resolve("absent")).getMessage().endsWith("no such directory"));
    assertFalse(MountInfo.at(tmp.resolve("absent")).isPresent());
  }

  @Test
  void refusesAFile() throws IOException {
    Path file = Files.createFile(tmp.resolve("file"));
    assertTrue(refused(file).getMessage().endsWith("not a directory"));
  }

  @Test
  void refusesANonEmptyMountpoint() throws IOException {
    Path dir = Files.createDirectory(tmp.resolve("full"));
    Files.createFile(dir.resolve("something"));
    assertTrue(refused(dir).getMessage().endsWith("not empty"));
  }

  @Test
  void refusesAMountpointAlreadyMounted() throws IOException {
    try (TestMount first = TestMount.start(new MemoryVfs(), true)) {
      assertTrue(refused(first.dir).getMessage().contains("already mounted (fuse.etcfs etcfs:test)"));
      Files.writeString(first.path("still"), "works");
      assertEquals("works", Files.readString(first.path("still")));
    }
  }

  @Test
  void unmountsAndReleasesWhatWasLeftOpen() throws IOException {
    MemoryVfs vfs = new MemoryVfs();
    TestMount mnt = TestMount.start(vfs, true);
    try {
      Files.writeString(mnt.path("f"), "x");
      Files.readString(mnt.path("f"));
      mnt.mount.close();
      assertFalse(MountInfo.at(mnt.dir).isPresent());
      assertEquals(vfs.count("open") + vfs.count("create"), vfs.released.get(),
          "every open file released once, by the kernel or at unmount");
    } finally {
      mnt.close();
    }
  }

  @Test
  void unmountsABusyMountWithinTheBound() throws IOException {
    MemoryVfs vfs = new MemoryVfs();
    TestMount mnt = TestMount.start(vfs, true);
    try {
      Path file = Files.writeString(mnt.path("held"), "x");
      FileChannel held = FileChannel.open(file, StandardOpenOption.READ);
      long start = System.nanoTime();
      mnt.mount.close();
      long millis = (System.nanoTime() - start) / 1_000_000;
      assertTrue(millis < 7_000, "unmount took " + millis + " ms");
      assertFalse(MountInfo.at(mnt.dir).isPresent(), "detached");
      assertEquals(vfs.count("open") + vfs.count("create"), vfs.released.get(),
          "the file left open was released to the Vfs");
      // the kernel may still send its flush for the held file: it gets EIO, never success
      try {
        held.close();
      } catch (IOException expected) {
        assertTrue(expected.getMessage().contains("Input/output error")
            || expected.getMessage().contains("connect"), expected.getMessage());
      }
    } finally {
      mnt.close();
    }
  }

  @Test
  void aDeadProcessMountIsCleanedByFusermount() throws IOException {
    // what a killed node leaves without auto_unmount; auto_unmount is checked in MountOptionsTest
    MemoryVfs vfs = new MemoryVfs();
    TestMount mnt = TestMount.start(vfs, true);
    mnt.close();
    assertFalse(MountInfo.at(mnt.dir).isPresent());
  }
}

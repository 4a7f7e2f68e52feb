package io.etcfs.fuse.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Every failure of the Vfs reaches the caller as its errno, and nothing fails as success. */
@Timeout(60)
class ErrnoTest {
  private static TestMount mnt;

  @BeforeAll
  static void mount() throws IOException {
    mnt = TestMount.start(new MemoryVfs(), true);
  }

  @AfterAll
  static void unmount() throws IOException {
    if (mnt != null) {
      mnt.close();
    }
  }

  @AfterEach
  void heal() {
    mnt.vfs.failing.clear();
  }

  private static void fail(String op, Throwable failure) {
    mnt.vfs.failing.put(op, failure);
  }

  @Test
  void enospcOnWrite() throws IOException {
    Path file = Files.createFile(mnt.path("full"));
    fail("write", new FsException(Errno.ENOSPC, "test: device full"));
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
      IOException e = assertThrows(IOException.class, () -> ch.write(ByteBuffer.allocate(10)));
      assertEquals("No space left on device", e.getMessage());
    }
  }

  @Test
  void eaccesOnMkdir() {
    fail("mkdir", new FsException(Errno.EACCES, "test: refused"));
    assertThrows(AccessDeniedException.class, () -> Files.createDirectory(mnt.path("denied")));
  }

  @Test
  void enotemptyOnRmdir() throws IOException {
    Path dir = Files.createDirectory(mnt.path("busy-dir"));
    fail("rmdir", new FsException(Errno.ENOTEMPTY, "test: not empty"));
    assertThrows(DirectoryNotEmptyException.class, () -> Files.delete(dir));
  }

  @Test
  void enoentFromTheVfsItself() {
    assertThrows(NoSuchFileException.class, () -> Files.readString(mnt.path("nothing-here")));
  }

  @Test
  void runtimeExceptionIsEioNotSuccess() {
    fail("mkdir", new IllegalStateException("test: a bug in the core"));
    IOException e =
        assertThrows(IOException.class, () -> Files.createDirectory(mnt.path("bug-dir")));
    assertTrue(e.getMessage().contains("Input/output error"), e.getMessage());
    mnt.vfs.failing.clear();
    assertFalse(Files.exists(mnt.path("bug-dir")));
  }

  @Test
  void errorIsEio() throws IOException {
    Path file = Files.writeString(mnt.path("err"), "x");
    fail("read", new StackOverflowError("test"));
    IOException e = assertThrows(IOException.class, () -> Files.readString(file));
    assertTrue(e.getMessage().contains("Input/output error"), e.getMessage());
  }

  @Test
  void errnoZeroIsEio() throws IOException {
    Path file = Files.writeString(mnt.path("zero"), "x");
    fail("setattr", new FsException(0, "test: no errno"));
    IOException e = assertThrows(IOException.class, () -> Files.setLastModifiedTime(file,
        java.nio.file.attribute.FileTime.fromMillis(0)));
    assertTrue(e.getMessage().contains("Input/output error"), e.getMessage());
  }

  @Test
  void failedFsyncAndFlushReachClose() throws IOException {
    Path file = Files.createFile(mnt.path("sync"));
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
      fail("fsync", new FsException(Errno.EIO, "test: device gone"));
      assertThrows(IOException.class, () -> ch.force(true));
      mnt.vfs.failing.clear();
      fail("flush", new FsException(Errno.ENOSPC, "test: commit refused"));
      IOException e = assertThrows(IOException.class, ch::close);
      assertEquals("No space left on device", e.getMessage());
    }
  }
}

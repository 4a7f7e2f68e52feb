package io.etcfs.core.fs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.spi.fs.InodeFence;
import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.OpenFile;
import io.etcfs.spi.vfs.Vfs;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The core's inode fences (spi.fs InodeFence), whatever the lock backend: raised before anything
 * is buffered under a new exclusive grant, declared clean when nothing stays buffered, what a
 * stat elsewhere goes by, and gone with the inode.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FenceTest {
  static final Caller ROOT = Caller.ROOT;
  static final int CREATE = Handle.O_CREAT | 2; // O_RDWR
  @TempDir Path dir;
  FsFixture fx;
  FsFixture.Node a;
  FsFixture.Node b;

  @BeforeEach
  void setUp() throws Exception {
    fx = new FsFixture(dir, 0);
    a = fx.new Node("a", EtcFs.DEFAULT_BUFFER_BYTES);
    b = fx.new Node("b", EtcFs.DEFAULT_BUFFER_BYTES);
  }

  @AfterEach
  void tearDown() throws Exception {
    a.fs.close();
    b.fs.close();
    fx.close();
  }

  private InodeFence fence(long ino) {
    return fx.store.get(fx.keys.inodeFence(ino)).map(kv -> InodeFence.decode(kv.value()))
        .orElse(null);
  }

  private static void write(OpenFile f, String text, long at) throws FsException {
    f.write(ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)), at);
  }

  @Test
  void aCreatedFileIsFencedByItsCreatorAndCleanAfterItsClose() throws Exception {
    OpenFile f = a.fs.create(Vfs.ROOT, "f", 0644, CREATE, ROOT);
    InodeFence raised = fence(f.ino());
    assertNotNull(raised, "raised by the create");
    assertEquals("a", raised.node());
    write(f, "hello", 0);
    assertFalse(fence(f.ino()).clean(), "data buffered: dirty");
    f.flush();
    f.release();
    assertTrue(fence(f.ino()).clean(), "the close committed everything");
    assertTrue(raised.sameHolder(fence(f.ino())), "the same grant");
  }

  /**
   * A writer elsewhere that has buffered data without committing: its fence is dirty, so a stat
   * here recalls its lock (the writer commits) instead of answering the old size.
   */
  @Test
  void aStatElsewhereSeesTheSizeAWriterHasBuffered() throws Exception {
    OpenFile f = a.fs.create(Vfs.ROOT, "f", 0644, CREATE, ROOT);
    write(f, "12345", 0);
    assertEquals(5, b.fs.getattr(f.ino()).size(), "b recalled a's lock: a committed");
    f.release();
  }

  /**
   * A backend that keeps no view of other nodes' locks: a stat here reads the fence, finds the
   * writer dirty and recalls it, and the size the writer committed last shows.
   */
  @Test
  void withoutALockViewAStatReadsTheFence() throws Exception {
    b.lockService.noView = true;
    OpenFile f = a.fs.create(Vfs.ROOT, "f", 0644, CREATE, ROOT);
    write(f, "12345", 0);
    assertEquals(5, b.fs.getattr(f.ino()).size(), "b read a dirty fence and recalled a's lock");
    write(f, "1234567", 0); // a's lock again
    f.flush();
    f.release();
    assertTrue(fence(f.ino()).clean());
    assertEquals(7, b.fs.getattr(f.ino()).size());
  }

  /** A lock given back with nothing buffered leaves its fence clean: stats elsewhere need no lock. */
  @Test
  void aFenceIsCleanOnceItsLockIsGivenBack() throws Exception {
    OpenFile f = a.fs.create(Vfs.ROOT, "f", 0644, CREATE, ROOT);
    write(f, "abc", 0);
    OpenFile r = b.fs.open(f.ino(), 0, ROOT); // recalls a's exclusive lock
    assertTrue(fence(f.ino()).clean(), "a's recall flush declared it clean");
    ByteBuffer got = ByteBuffer.allocate(10);
    assertEquals(3, r.read(got, 0));
    r.release();
    f.release();
  }

  /** A new exclusive holder raises: the one before commits nothing it still buffers. */
  @Test
  void aSecondHolderRaisesAndTheFirstsLateCommitFails() throws Exception {
    OpenFile f = a.fs.create(Vfs.ROOT, "f", 0644, CREATE, ROOT);
    write(f, "first", 0);
    f.fsync(false);
    InodeFence first = fence(f.ino());
    fx.raiseElsewhere(f.ino()); // a wrong grant elsewhere, or a's session lapsed
    write(f, "again", 0);
    assertEquals(Errno.EIO, assertThrows(FsException.class, () -> f.fsync(false)).errno());
    assertFalse(first.sameHolder(fence(f.ino())), "nothing of a's committed");
    assertEquals(Errno.EIO, assertThrows(FsException.class, () -> write(f, "more", 0)).errno(),
        "the lock is lost: nothing more is buffered under it");
  }

  /**
   * A backend that names no metadata revision for its grants (one that keeps its locks outside
   * etcd): the core reads the store's revision after the grant, so a reader still sees what the
   * last writer committed.
   */
  @Test
  void aGrantWithoutARevisionStillShowsTheLastWritersData() throws Exception {
    a.lockService.noGrantRevision = true;
    b.lockService.noGrantRevision = true;
    OpenFile f = a.fs.create(Vfs.ROOT, "f", 0644, CREATE, ROOT);
    for (int i = 0; i < 5; i++) {
      write(f, "v" + i, 0);
      OpenFile r = b.fs.open(f.ino(), 0, ROOT);
      ByteBuffer got = ByteBuffer.allocate(10);
      assertEquals(2, r.read(got, 0));
      assertEquals("v" + i, new String(got.array(), 0, 2, StandardCharsets.UTF_8));
      r.release();
    }
    f.release();
  }

  @Test
  void theFenceGoesWithItsInode() throws Exception {
    OpenFile f = a.fs.create(Vfs.ROOT, "f", 0644, CREATE, ROOT);
    write(f, "x", 0);
    f.release();
    assertNotNull(fence(f.ino()));
    a.fs.unlink(Vfs.ROOT, "f", ROOT);
    a.fs.statfs(); // settles what is queued
    assertEquals(null, fence(f.ino()), "deleted with the inode");
  }
}

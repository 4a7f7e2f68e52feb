package io.etcfs.core.fs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.KernelCache;
import io.etcfs.spi.vfs.OpenFile;
import io.etcfs.spi.vfs.Vfs;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the core tells a front end's kernel cache (SPI vfs 1.3): other nodes' name changes, not
 * its own; every inode record change; a lock going before it goes; and the grant under which
 * the kernel may cache a file.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class KernelNoticesTest {
  static final Caller ROOT = Caller.ROOT;
  @TempDir Path dir;
  FsFixture fx;
  FsFixture.Node a;
  FsFixture.Node b;
  final List<String> told = new CopyOnWriteArrayList<>();

  @BeforeEach
  void setUp() throws Exception {
    fx = new FsFixture(dir, 0);
    a = fx.node("a");
    b = fx.node("b");
    a.fs.setKernelCache(new KernelCache() {
      @Override
      public void entryChanged(long d, String name) {
        told.add("entry " + d + " " + name);
      }

      @Override
      public void inodeChanged(long ino) {
        told.add("inode " + ino);
      }

      @Override
      public void lockGoing(long ino, boolean writeBack) {
        told.add("going " + ino + " " + writeBack + " grant " + a.fs.cacheGrant(ino));
      }
    });
  }

  @AfterEach
  void tearDown() throws Exception {
    a.fs.close();
    b.fs.close();
    fx.close();
  }

  /**
   * Notices are never lost while this node's commits begin and end around them: the wait for
   * commits in flight once threw when the last one ended between two looks at the set, which
   * ended the delivery task and dropped its notices (seen in a long benchmark's log).
   */
  @Test
  void noNoticeIsLostWhileCommitsComeAndGo() throws Throwable {
    KernelNotices notices = new KernelNotices(new io.etcfs.core.fs.meta.FsKeys("t"));
    java.util.concurrent.atomic.AtomicInteger delivered =
        new java.util.concurrent.atomic.AtomicInteger();
    notices.setSink(new KernelCache() {
      @Override
      public void entryChanged(long d, String name) {}

      @Override
      public void inodeChanged(long ino) {
        delivered.incrementAndGet();
      }

      @Override
      public void lockGoing(long ino, boolean writeBack) {}
    });
    java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
    List<Thread> committers = new java.util.ArrayList<>();
    for (int t = 0; t < 3; t++) {
      Thread c = new Thread(() -> {
        long rev = 1_000_000;
        while (!stop.get()) {
          notices.end(notices.begin(), rev++);
        }
      });
      c.start();
      committers.add(c);
    }
    int events = 5000;
    try {
      byte[] key = new io.etcfs.core.fs.meta.FsKeys("t").inode(42);
      for (int i = 1; i <= events; i++) {
        notices.onEvents(List.of(new io.etcfs.spi.meta.WatchEvent(
            io.etcfs.spi.meta.WatchEvent.Type.PUT,
            new io.etcfs.spi.meta.KeyValue(key, new byte[0], 1, i, i, 0))));
      }
      TwoNodesTest.eventually(() -> assertEquals(events, delivered.get(), "notices delivered"));
    } finally {
      stop.set(true);
      for (Thread c : committers) {
        c.join();
      }
      notices.close();
    }
  }

  @Test
  void anotherNodesNamesAreToldThisNodesOwnAreNot() throws Throwable {
    long mine = a.fs.mkdir(Vfs.ROOT, "mine", 0755, ROOT).ino();
    long theirs = b.fs.mkdir(Vfs.ROOT, "theirs", 0755, ROOT).ino();
    b.fs.rename(Vfs.ROOT, "theirs", Vfs.ROOT, "renamed", ROOT);
    TwoNodesTest.eventually(() -> assertTrue(told.contains("entry 1 renamed"), told.toString()));
    assertTrue(told.contains("entry 1 theirs"), told.toString());
    assertFalse(told.contains("entry 1 mine"), "a's own create was told: " + told);
    assertTrue(told.contains("inode " + mine), "every inode record change is told: " + told);
    assertTrue(told.contains("inode " + theirs), told.toString());
    assertTrue(told.indexOf("entry 1 theirs") < told.indexOf("entry 1 renamed"), "in order");
  }

  @Test
  void aLockGoesOnlyAfterTheKernelWasToldWhileTheGrantWasAlreadyWithdrawn() throws Throwable {
    OpenFile w = a.fs.create(Vfs.ROOT, "f", 0644, 2, ROOT);
    w.write(ByteBuffer.wrap("buffered on a".getBytes()), 0); // a takes the exclusive lock
    long grant = a.fs.cacheGrant(w.ino());
    assertNotEquals(0, grant, "a holds the lock: the kernel may cache under it");
    OpenFile r = b.fs.open(w.ino(), 0, ROOT);
    ByteBuffer buf = ByteBuffer.allocate(32);
    assertEquals(13, r.read(buf, 0)); // b's shared lock recalls a's
    assertEquals(List.of("going " + w.ino() + " true grant 0"),
        told.stream().filter(t -> t.startsWith("going")).toList(),
        "told once, before the lock went, with no grant to cache under any more");
    assertEquals(0, a.fs.cacheGrant(w.ino()));
    w.write(ByteBuffer.wrap("again".getBytes()), 0); // a asks for its lock again
    long again = a.fs.cacheGrant(w.ino());
    assertNotEquals(0, again);
    assertNotEquals(grant, again, "a new grant: what was cached under the old one is stale");
    r.release();
    w.release();
  }
}

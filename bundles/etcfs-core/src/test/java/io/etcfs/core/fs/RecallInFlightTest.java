package io.etcfs.core.fs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.spi.lock.LockMode;
import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.KernelCache;
import io.etcfs.spi.vfs.OpenFile;
import io.etcfs.spi.vfs.Vfs;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A recall that comes while a grant is still on its way to the call that asked for it, with
 * another write of the same file waiting: the kernel's write-back of a lock waits for the pages
 * of the writes in flight (modelled here by a kernel that does exactly that), so nothing of a
 * hand-over may wait for a write whose call waits in the backend for that same lock.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RecallInFlightTest {
  static final Caller ROOT = Caller.ROOT;
  @TempDir Path dir;
  FsFixture fx;
  FsFixture.Node a;
  FsFixture.Node b;
  final ExecutorService pool = Executors.newCachedThreadPool();

  @BeforeEach
  void setUp() throws Exception {
    fx = new FsFixture(dir, 0);
    a = fx.node("a");
    b = fx.node("b");
  }

  @AfterEach
  void tearDown() throws Exception {
    pool.shutdownNow();
    a.fs.close();
    b.fs.close();
    fx.close();
  }

  /**
   * Met under load after a lock switch on the Hazelcast backend, where a writer got EIO after
   * 30 s: the recall of a lock granted to one write but not registered yet wrote back and
   * dropped the file's pages, which waited for a second write; that write waited in the backend
   * for the lock being recalled, which waited for the write-back. Now a lock not registered is
   * handed over without the kernel (nothing can be cached under it), and a second call of the
   * node waits for the first one's answer outside the backend.
   */
  @Test
  void aRecallOfAGrantStillInFlightWaitsForNoWriteOfTheFile() throws Exception {
    OpenFile created = b.fs.create(Vfs.ROOT, "f", 0644, 2, ROOT);
    long ino = created.ino();
    created.write(ByteBuffer.wrap(new byte[8192]), 0);
    created.release(); // b holds the exclusive lock: a asks for it anew

    // the kernel of a: a write-back waits for every write of the file in flight
    java.util.concurrent.atomic.AtomicInteger writesInFlight =
        new java.util.concurrent.atomic.AtomicInteger();
    AtomicBoolean writeBackStuck = new AtomicBoolean();
    a.fs.setKernelCache(new KernelCache() {
      @Override
      public void entryChanged(long d, String name) {}

      @Override
      public void inodeChanged(long i) {}

      @Override
      public void lockGoing(long i, boolean writeBack) {
        if (!writeBack || i != ino) {
          return;
        }
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (writesInFlight.get() > 0) {
          if (System.nanoTime() > end) {
            writeBackStuck.set(true);
            return;
          }
          Thread.onSpinWait();
        }
      }
    });

    // the first write's grant stays on its way to it until told to go on
    CountDownLatch grantedToFirst = new CountDownLatch(1);
    CountDownLatch goOn = new CountDownLatch(1);
    AtomicBoolean once = new AtomicBoolean();
    a.lockService.granted = lock -> {
      if (lock.inode() == ino && lock.mode() == LockMode.EXCLUSIVE && once.compareAndSet(false,
          true)) {
        grantedToFirst.countDown();
        await(goOn);
      }
    };
    OpenFile first = a.fs.open(ino, 2, ROOT);
    OpenFile second = a.fs.open(ino, 2, ROOT);
    Future<?> w1 = pool.submit(() -> write(first, writesInFlight, (byte) 1, 0));
    assertTrue(grantedToFirst.await(10, TimeUnit.SECONDS), "a's first write was granted");

    // b asks for the lock: the recall of a's grant comes before the grant is registered
    Future<byte[]> reader = pool.submit(() -> {
      OpenFile r = b.fs.open(ino, 0, ROOT);
      try {
        ByteBuffer buf = ByteBuffer.allocate(1);
        r.read(buf, 0);
        return buf.array();
      } finally {
        r.release();
      }
    });
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!fx.locks.recalling(ino) && !reader.isDone() && System.nanoTime() < end) {
      Thread.onSpinWait();
    }

    // a second write of the file, in flight (its pages locked) before the first registers
    AtomicReference<Thread> secondThread = new AtomicReference<>();
    Future<?> w2 = pool.submit(() -> {
      secondThread.set(Thread.currentThread());
      write(second, writesInFlight, (byte) 2, 4096);
      return null;
    });
    while ((secondThread.get() == null || secondThread.get().getState() == Thread.State.RUNNABLE)
        && !w2.isDone() && System.nanoTime() < end) {
      Thread.onSpinWait(); // until it waits: in the backend (before) or for the first's answer
    }
    goOn.countDown();

    w2.get(10, TimeUnit.SECONDS); // was: EIO after 30 s
    w1.get(10, TimeUnit.SECONDS);
    reader.get(10, TimeUnit.SECONDS);
    assertTrue(!writeBackStuck.get(), "no write-back of a waited for a write in flight");
    first.release();
    second.release();

    OpenFile check = b.fs.open(ino, 0, ROOT);
    ByteBuffer all = ByteBuffer.allocate(8192);
    assertEquals(8192, check.read(all, 0));
    assertEquals(1, all.get(0), "the first write");
    assertEquals(2, all.get(4096), "the second write");
    check.release();
  }

  private static Void write(OpenFile f, java.util.concurrent.atomic.AtomicInteger inFlight,
      byte value, long offset) throws Exception {
    inFlight.incrementAndGet();
    try {
      f.write(ByteBuffer.wrap(new byte[] {value}), offset);
    } finally {
      inFlight.decrementAndGet();
    }
    return null;
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await(20, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}

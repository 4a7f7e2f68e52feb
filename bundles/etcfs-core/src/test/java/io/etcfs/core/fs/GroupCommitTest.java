package io.etcfs.core.fs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.spi.meta.Compare;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.Txn;
import io.etcfs.spi.meta.TxnResult;
import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.OpenFile;
import io.etcfs.spi.vfs.Vfs;
import io.etcfs.support.meta.ForwardingMetaStore;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The commits files make at their release go in groups (one device flush, as few transactions
 * as their keys allow): many files released at once cost fewer transactions than files, every
 * one of them is committed as if alone, and a shared commit that fails its compares is retried
 * file by file.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class GroupCommitTest {
  static final Caller ROOT = Caller.ROOT;
  static final int CREATE = Handle.O_CREAT | 2; // O_RDWR
  static final int WRITERS = 8;
  static final int FILES_EACH = 16;
  @TempDir Path dir;
  FsFixture fx;
  Slow store;
  FsFixture.Node a;
  FsFixture.Node b;

  /** A store whose commits each take 3 ms (etcd's fsync), counted; one can be made to fail. */
  final class Slow extends ForwardingMetaStore {
    final AtomicInteger commits = new AtomicInteger();
    /** Commits that write two or more inodes and no name: a group of releases. */
    final AtomicInteger groups = new AtomicInteger();
    volatile boolean failNextGroup;
    /** The next commit of an inode without a name is held this long, after {@link #slowed}. */
    volatile long slowNextCommitMs;
    final java.util.concurrent.CountDownLatch slowed = new java.util.concurrent.CountDownLatch(1);

    Slow() {
      super(fx.store);
    }

    @Override
    public TxnResult commit(Txn txn) {
      commits.incrementAndGet();
      long inodes = txn.onSuccess().stream().filter(op -> op instanceof Op.Put p
          && new String(p.key(), StandardCharsets.UTF_8).contains("/i/")).count();
      boolean names = txn.onSuccess().stream().anyMatch(op -> op instanceof Op.Put p
          && new String(p.key(), StandardCharsets.UTF_8).contains("/d/"));
      if (inodes > 1 && !names) { // not a mkdir (the new directory and its parent)
        groups.incrementAndGet();
        if (failNextGroup) {
          failNextGroup = false;
          // As if another node had changed one of the group's inodes: a compare fails.
          return delegate.commit(new Txn().when(Compare.absent(fx.keys.member("a"))));
        }
      }
      long slow = slowNextCommitMs;
      if (slow > 0 && inodes > 0 && !names) {
        slowNextCommitMs = 0;
        slowed.countDown();
        try {
          TimeUnit.MILLISECONDS.sleep(slow);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      try {
        TimeUnit.MILLISECONDS.sleep(3);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return delegate.commit(txn);
    }
  }

  @BeforeEach
  void setUp() throws Exception {
    fx = new FsFixture(dir, 0);
    store = new Slow();
    a = fx.new Node("a", EtcFs.DEFAULT_BUFFER_BYTES, store);
    b = fx.node("b");
  }

  @AfterEach
  void tearDown() throws Exception {
    a.fs.close();
    b.fs.close();
    fx.close();
  }

  @Test
  void filesReleasedTogetherShareTransactions() throws Exception {
    List<Long> inos = writeMany("g");
    int files = inos.size();
    // Ungrouped, each file costs two: its lock made dirty again (its create declared it clean),
    // and its release's commit.
    assertTrue(store.commits.get() < files * 7 / 4,
        store.commits.get() + " transactions for " + files + " files");
    assertTrue(store.groups.get() > 0, "no release shared a transaction");
    readBack(inos, "g");
  }

  @Test
  void aGroupWhoseCommitFailsIsCommittedFileByFile() throws Exception {
    store.failNextGroup = true;
    List<Long> inos = writeMany("f");
    assertTrue(!store.failNextGroup, "no group was formed, so none failed");
    readBack(inos, "f");
  }

  /**
   * A read on another node while the writer's release waits for its group's commit: the recall
   * of the writer's lock waits for that commit (it needs the file's local lock, which the
   * release holds until then), so the reader gets the bytes, not the file as created.
   */
  @Test
  void aRecallRacingAQueuedCommitWaitsForIt() throws Exception {
    OpenFile w = a.fs.create(Vfs.ROOT, "raced", 0644, CREATE, ROOT);
    w.write(ByteBuffer.wrap("committed before the recall".getBytes(StandardCharsets.UTF_8)), 0);
    store.slowNextCommitMs = 300;
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      Future<?> release = pool.submit(() -> {
        w.release();
        return null;
      });
      assertTrue(store.slowed.await(20, TimeUnit.SECONDS), "the release's commit never came");
      OpenFile r = b.fs.open(w.ino(), 0, ROOT);
      try {
        ByteBuffer buf = ByteBuffer.allocate(64);
        int len = r.read(buf, 0);
        assertEquals("committed before the recall",
            new String(buf.array(), 0, Math.max(0, len), StandardCharsets.UTF_8));
      } finally {
        r.release();
      }
      release.get(20, TimeUnit.SECONDS);
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * WRITERS threads each write and release FILES_EACH files in their own directory. The files
   * are created empty first: a file created from its directory's queue and released before
   * that create commits has its data carried by the create (DelegationTest), not by a release.
   */
  private List<Long> writeMany(String prefix) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(WRITERS);
    try {
      List<Long> inos = new ArrayList<>();
      for (int t = 0; t < WRITERS; t++) {
        long d = a.fs.mkdir(Vfs.ROOT, prefix + t, 0755, ROOT).ino();
        for (int i = 0; i < FILES_EACH; i++) {
          OpenFile f = a.fs.create(d, "n" + i, 0644, CREATE, ROOT);
          f.release();
          inos.add(f.ino());
        }
      }
      a.fs.statfs(); // commits every queue
      store.commits.set(0);
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < WRITERS; t++) {
        int writer = t;
        done.add(pool.submit(() -> {
          for (int i = 0; i < FILES_EACH; i++) {
            OpenFile f = a.fs.open(inos.get(writer * FILES_EACH + i), 2, ROOT);
            f.write(ByteBuffer.wrap(content(prefix, writer, i)), 0);
            f.release();
          }
          return null;
        }));
      }
      for (Future<?> f : done) {
        f.get(50, TimeUnit.SECONDS);
      }
      return inos;
    } finally {
      pool.shutdownNow();
    }
  }

  private void readBack(List<Long> inos, String prefix) throws FsException {
    for (int k = 0; k < inos.size(); k++) {
      OpenFile r = b.fs.open(inos.get(k), 0, ROOT);
      try {
        ByteBuffer buf = ByteBuffer.allocate(64);
        int len = r.read(buf, 0);
        assertEquals(new String(content(prefix, k / FILES_EACH, k % FILES_EACH),
            StandardCharsets.UTF_8), new String(buf.array(), 0, len, StandardCharsets.UTF_8));
      } finally {
        r.release();
      }
    }
  }

  private static byte[] content(String prefix, int writer, int i) {
    return (prefix + " written by " + writer + ", file " + i).getBytes(StandardCharsets.UTF_8);
  }
}

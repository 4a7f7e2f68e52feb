package io.etcfs.core.fs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.Txn;
import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.OpenFile;
import io.etcfs.spi.vfs.Vfs;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/** Two engines with their own caches on one store and one device: "nodes". */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TwoNodesTest {
  static final Caller ROOT = Caller.ROOT;
  @TempDir Path dir;
  FsFixture fx;
  FsFixture.Node a;
  FsFixture.Node b;

  @BeforeEach
  void setUp() throws Exception {
    fx = new FsFixture(dir, 0);
    a = fx.node("a");
    b = fx.node("b");
  }

  @AfterEach
  void tearDown() throws Exception {
    a.fs.close();
    b.fs.close();
    fx.close();
  }

  /** Every entry readdir lists in {@code dir}, page by page. */
  static int countEntries(EtcFs fs, long dir) throws FsException {
    return listing(fs, dir).size();
  }

  /** Every entry of {@code dir}, page after page, in listing order. */
  static List<io.etcfs.spi.vfs.DirEntry> listing(EtcFs fs, long dir) throws FsException {
    List<io.etcfs.spi.vfs.DirEntry> all = new java.util.ArrayList<>();
    long cookie = 0;
    boolean more = true;
    while (more) {
      var page = fs.readdir(dir, cookie, 1000);
      all.addAll(page.entries());
      more = page.more();
      cookie = page.entries().isEmpty() ? cookie
          : page.entries().get(page.entries().size() - 1).cookie();
    }
    return all;
  }

  /** Waits until {@code check} passes: the other node learns through its watch. */
  static void eventually(Executable check) throws Throwable {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (true) {
      try {
        check.execute();
        return;
      } catch (Throwable t) {
        if (System.nanoTime() > end) {
          throw t;
        }
        Thread.sleep(10);
      }
    }
  }

  /**
   * A directory a node makes is known empty from its create on: the look-ups in it before its
   * first files (tar x, mkdir -p) read nothing; what is made in it afterwards, there or on
   * another node, is found all the same.
   */
  @Test
  void aNewDirectorysFirstLookUpsReadNothingAndLaterCreatesShow() throws Throwable {
    var d = a.fs.mkdir(Vfs.ROOT, "fresh", 0755, ROOT);
    long reads = a.fs.stats().storeRanges() + a.fs.stats().storeGets();
    assertEquals(Errno.ENOENT, assertThrows(FsException.class,
        () -> a.fs.lookup(d.ino(), "x", ROOT)).errno());
    assertEquals(2, a.fs.getattr(d.ino()).nlink());
    assertEquals(reads, a.fs.stats().storeRanges() + a.fs.stats().storeGets(),
        "reads for the look-ups in a new directory");
    var mine = a.fs.mknod(d.ino(), "x", 0644, 0, ROOT);
    assertEquals(mine.ino(), a.fs.lookup(d.ino(), "x", ROOT).ino());
    eventually(() -> assertEquals(d.ino(), b.fs.lookup(Vfs.ROOT, "fresh", ROOT).ino()));
    var theirs = b.fs.mknod(d.ino(), "y", 0644, 0, ROOT);
    eventually(() -> assertEquals(theirs.ino(), a.fs.lookup(d.ino(), "y", ROOT).ino()));
    assertEquals(2, countEntries(a.fs, d.ino()));
  }

  /**
   * A directory made on another node is known complete from the create its watch shows: the
   * look-ups in it here ({@code git status} or {@code find} of a tree another node wrote) read
   * nothing, where each directory's first one read its whole entry range.
   */
  @Test
  void aDirectoryMadeElsewhereIsKnownCompleteFromTheWatch() throws Throwable {
    var d = a.fs.mkdir(Vfs.ROOT, "theirs", 0755, ROOT);
    var x = a.fs.mknod(d.ino(), "x", 0644, 0, ROOT);
    a.fs.mknod(Vfs.ROOT, "marker", 0644, 0, ROOT);
    // b's watch applies events in order: once it shows the marker it has shown both creates in
    // the directory, and b has not looked into it yet
    eventually(() -> b.fs.lookup(Vfs.ROOT, "marker", ROOT));
    b.fs.getattr(x.ino()); // the lock of x (a's, from its create): asked for here, not counted
    long reads = b.fs.stats().storeRanges() + b.fs.stats().storeGets();
    assertEquals(x.ino(), b.fs.lookup(d.ino(), "x", ROOT).ino());
    assertEquals(Errno.ENOENT, assertThrows(FsException.class,
        () -> b.fs.lookup(d.ino(), "y", ROOT)).errno());
    assertEquals(reads, b.fs.stats().storeRanges() + b.fs.stats().storeGets(),
        "reads for the look-ups in a directory made on the other node");
    var later = a.fs.mknod(d.ino(), "y", 0644, 0, ROOT);
    eventually(() -> assertEquals(later.ino(), b.fs.lookup(d.ino(), "y", ROOT).ino()));
  }

  /**
   * A call made as a no-wait section (a FUSE thread answering from memory) answers what the
   * node holds and gives up, answering nothing, where it would wait: for the lock of a file the
   * other node is writing, a stat here must not answer the committed size from the cache.
   */
  @Test
  void aNoWaitCallAnswersFromMemoryOrGivesUp() throws Throwable {
    var f = a.fs.create(Vfs.ROOT, "w", 0644, 2, ROOT);
    f.write(ByteBuffer.wrap("buffered on a".getBytes()), 0);
    a.fs.mknod(Vfs.ROOT, "marker", 0644, 0, ROOT);
    eventually(() -> b.fs.lookup(Vfs.ROOT, "marker", ROOT)); // b knows w, holds nothing of it
    long calls = getattrCalls(b.fs);
    assertNull(io.etcfs.spi.meta.NoWait.call(() -> b.fs.getattr(f.ino())),
        "a stat of a file the other node writes needs its lock: given up");
    assertEquals(calls, getattrCalls(b.fs), "a call given up is counted where it is answered");
    assertEquals(13, b.fs.getattr(f.ino()).size()); // on a thread that may wait: the recall
    // now held here: answered from memory
    assertEquals(13, io.etcfs.spi.meta.NoWait.call(() -> b.fs.getattr(f.ino())).size());
    var mine = b.fs.mkdir(Vfs.ROOT, "mine", 0755, ROOT); // its lock and entries: b's
    assertEquals(Errno.ENOENT, assertThrows(FsException.class,
        () -> io.etcfs.spi.meta.NoWait.call(() -> b.fs.lookup(mine.ino(), "absent", ROOT)))
        .errno(), "an absence the cache knows is an answer");
    assertNull(io.etcfs.spi.meta.NoWait.call(() -> b.fs.getattr(f.ino() + 1000)),
        "an inode not cached needs a read: given up");
    assertFalse(io.etcfs.spi.meta.NoWait.active());
    f.release();
  }

  private static long getattrCalls(EtcFs fs) {
    var op = fs.stats().ops().get("getattr");
    return op == null ? 0 : op.calls();
  }

  @Test
  void eachSeesTheOthersNamespaceChanges() throws Throwable {
    assertThrows(FsException.class, () -> b.fs.lookup(Vfs.ROOT, "d", ROOT)); // cached: absent
    var d = a.fs.mkdir(Vfs.ROOT, "d", 0755, ROOT);
    eventually(() -> assertEquals(d.ino(), b.fs.lookup(Vfs.ROOT, "d", ROOT).ino()));
    eventually(() -> assertEquals(3, b.fs.getattr(Vfs.ROOT).nlink()));
    b.fs.rename(Vfs.ROOT, "d", Vfs.ROOT, "e", ROOT);
    eventually(() -> assertEquals(d.ino(), a.fs.lookup(Vfs.ROOT, "e", ROOT).ino()));
    assertEquals(Errno.ENOENT, assertThrows(FsException.class,
        () -> a.fs.lookup(Vfs.ROOT, "d", ROOT)).errno());
    a.fs.setxattr(d.ino(), "user.x", new byte[] {1}, 0, ROOT);
    eventually(() -> assertArrayEquals(new byte[] {1}, b.fs.getxattr(d.ino(), "user.x")));
    b.fs.rmdir(Vfs.ROOT, "e", ROOT);
    eventually(() -> assertEquals(Errno.ENOENT, assertThrows(FsException.class,
        () -> a.fs.getattr(d.ino())).errno()));
  }

  @Test
  void committedDataIsSeenByTheOtherNode() throws Throwable {
    OpenFile w = a.fs.create(Vfs.ROOT, "f", 0644, 2, ROOT);
    w.write(ByteBuffer.wrap("first".getBytes()), 0);
    w.flush();
    OpenFile r = b.fs.open(w.ino(), 0, ROOT);
    ByteBuffer buf = ByteBuffer.allocate(10);
    r.read(buf, 0);
    assertEquals("first", new String(buf.array(), 0, 5));
    w.write(ByteBuffer.wrap("SECOND".getBytes()), 0);
    w.flush();
    eventually(() -> {
      ByteBuffer again = ByteBuffer.allocate(10);
      assertEquals(6, r.read(again, 0));
      assertEquals("SECOND", new String(again.array(), 0, 6));
    });
    r.release();
    w.release();
  }

  /**
   * stat (and lseek(SEEK_END), which the kernel answers from it) on one node after write() on
   * another: the writer's buffered size and mtime show at once, through a recall, not at its
   * next flush. No waiting: the lock table the answer depends on is the test's own.
   */
  @Test
  void unflushedSizeAndTimesShowInTheOtherNodesStatAtOnce() throws Throwable {
    OpenFile w = a.fs.create(Vfs.ROOT, "grows", 0644, 2, ROOT);
    long size = 0;
    for (int round = 0; round < 20; round++) {
      byte[] line = ("line " + round + "\n").getBytes();
      w.write(ByteBuffer.wrap(line), size); // buffered on a, under its exclusive lock
      size += line.length;
      var seen = b.fs.getattr(w.ino()); // b takes the shared lock: a commits first
      assertEquals(size, seen.size(), "size on b after write " + round);
      assertEquals(a.fs.getattr(w.ino()).mtimeNs(), seen.mtimeNs(), "mtime after " + round);
      assertEquals(size, b.fs.resolve("/grows", ROOT).size(), "size by path after " + round);
    }
    w.release();
  }

  /**
   * A lookup answers with attributes as current as a getattr's (the kernel states a file from a
   * lookup's reply), and no answer comes from a lock view that trails the cache: with b's lock
   * view lagging, b's first look at a file a created and wrote takes the shared lock instead of
   * telling the size of the create.
   */
  @Test
  void aNodeWhoseLockViewLagsNeverStatesAFileFromBeforeItsWritersLock() throws Throwable {
    b.lockService.viewLags = true;
    OpenFile w = a.fs.create(Vfs.ROOT, "new", 0644, 2, ROOT);
    w.write(ByteBuffer.wrap("12345".getBytes()), 0); // buffered on a, under the create's lock
    io.etcfs.spi.vfs.Attr[] seen = new io.etcfs.spi.vfs.Attr[1];
    eventually(() -> seen[0] = b.fs.lookup(Vfs.ROOT, "new", ROOT)); // the name comes by watch
    assertEquals(5, seen[0].size(), "size in b's lookup");
    assertTrue(b.fs.activeInodes().contains(w.ino()), "b took the shared lock");
    w.write(ByteBuffer.wrap("678".getBytes()), 5); // a takes its lock back
    assertEquals(8, b.fs.getattr(w.ino()).size(), "size in b's getattr");
    w.release();
  }

  /**
   * A close commits everything and declares the writer clean: the other node states the file
   * from its cache, without a recall, until the writer writes again.
   */
  @Test
  void aFileClosedByItsWriterIsStatedWithoutARecallUntilWrittenAgain() throws Throwable {
    OpenFile w = a.fs.create(Vfs.ROOT, "closed", 0644, 2, ROOT);
    w.write(ByteBuffer.wrap("12345".getBytes()), 0);
    w.release(); // commits, and declares a's exclusive lock clean in the same commit
    // b sees the fence clean once its cache watch shows that commit (until then it would take
    // the shared lock: safe, only slower)
    eventually(() -> assertTrue(b.fs.fenceOf(w.ino()).orElseThrow().clean()));
    assertEquals(5, b.fs.getattr(w.ino()).size());
    assertTrue(b.fs.activeInodes().isEmpty(), "b took a lock to stat: " + b.fs.activeInodes());
    assertTrue(a.fs.activeInodes().contains(w.ino()), "a keeps its lock cached");
    OpenFile again = a.fs.open(w.ino(), 2, ROOT);
    again.write(ByteBuffer.wrap("678".getBytes()), 5); // dirty again: b must recall
    // a raised its fence dirty before the write was buffered; b learns it through its cache
    // watch, a moment later (the same allowance as for names), and from then on recalls
    eventually(() -> assertEquals(8, b.fs.getattr(w.ino()).size()));
    assertTrue(b.fs.activeInodes().contains(w.ino()), "b recalled a's lock");
    again.release();
  }

  /** ls -l asks for xattrs of every file: one created elsewhere costs no round trip here. */
  @Test
  void anInodeCreatedElsewhereHasItsEmptyXattrsFromTheWatch() throws Throwable {
    OpenFile f = a.fs.create(Vfs.ROOT, "fresh", 0644, 2, ROOT);
    f.release();
    eventually(() -> assertEquals(f.ino(), b.fs.lookup(Vfs.ROOT, "fresh", ROOT).ino()));
    long reads = b.fs.stats().storeGets() + b.fs.stats().storeRanges();
    assertEquals(List.of(), b.fs.listxattr(f.ino()));
    assertEquals(Errno.ENODATA, assertThrows(FsException.class,
        () -> b.fs.getxattr(f.ino(), "security.selinux")).errno());
    assertEquals(reads, b.fs.stats().storeGets() + b.fs.stats().storeRanges(), "reads on b");
    a.fs.setxattr(f.ino(), "user.k", new byte[] {1}, 0, ROOT); // the event drops b's empty set
    eventually(() -> assertArrayEquals(new byte[] {1}, b.fs.getxattr(f.ino(), "user.k")));
  }

  @Test
  void aFileNobodyWritesIsStatedWithoutTakingItsLock() throws Throwable {
    OpenFile w = a.fs.create(Vfs.ROOT, "quiet", 0644, 2, ROOT);
    w.write(ByteBuffer.wrap("x".getBytes()), 0);
    w.release();
    a.fs.setxattr(w.ino(), EtcFs.PUBLISH, new byte[0], 0, ROOT); // a lets go of its lock
    // the create's dirty fence, then the close's clean one: b's watch shows it a moment later
    eventually(() -> assertTrue(b.fs.fenceOf(w.ino()).orElseThrow().clean()));
    assertEquals(1, b.fs.getattr(w.ino()).size());
    assertTrue(b.fs.activeInodes().isEmpty(), "b took a lock to stat: " + b.fs.activeInodes());
  }

  @Test
  void unflushedWritesAreReadOnTheOtherNodeAtOnce() throws Throwable {
    OpenFile w = a.fs.create(Vfs.ROOT, "g", 0644, 2, ROOT);
    OpenFile r = b.fs.open(w.ino(), 0, ROOT);
    for (int round = 0; round < 20; round++) {
      String text = "round " + round;
      w.write(ByteBuffer.wrap(text.getBytes()), 0); // buffered on a, under its exclusive lock
      ByteBuffer buf = ByteBuffer.allocate(32);
      int n = r.read(buf, 0); // b's shared lock recalls a's: a commits before b reads
      assertEquals(text, new String(buf.array(), 0, n));
    }
    r.release();
    w.release();
  }

  @Test
  void readingAFileAnotherNodeDeletedFailsClearly() throws Throwable {
    OpenFile w = a.fs.create(Vfs.ROOT, "doomed", 0644, 2, ROOT);
    w.write(ByteBuffer.wrap("bytes".getBytes()), 0);
    w.release();
    OpenFile r = b.fs.open(w.ino(), 0, ROOT);
    a.fs.unlink(Vfs.ROOT, "doomed", ROOT); // not open on a: purged at once
    eventually(() -> assertEquals(Errno.ENOENT, assertThrows(FsException.class,
        () -> r.read(ByteBuffer.allocate(10), 0)).errno()));
    r.release();
  }

  /**
   * A reader that opens one file of a directory it has listed gets the shared locks of the
   * other files in the same round trip (SPI lock 2.4): reading 20 files costs one lock request,
   * not 20. A prefetched lock is recalled by a writer like any other, so the reader then reads
   * the writer's new bytes; a file the writer still holds is left out and locked at its open.
   */
  @Test
  void readingTheFilesOfAListedDirectoryTakesTheirLocksTogether() throws Throwable {
    var d = a.fs.mkdir(Vfs.ROOT, "many", 0755, ROOT);
    int files = 20;
    long[] inos = writtenAndPublished(d.ino(), files, 7); // f7's lock stays with its writer
    eventually(() -> assertEquals(files, countEntries(b.fs, d.ino())));
    int before = b.lockService.requests();
    for (int i = 0; i < files; i++) {
      assertEquals("file " + i, read(b, b.fs.lookup(d.ino(), "f" + i, ROOT).ino()));
    }
    assertEquals(2, b.lockService.requests() - before,
        "one request for the 19 files nobody writes, one for f7");
    OpenFile w = a.fs.open(inos[3], 2, ROOT);
    w.write(ByteBuffer.wrap("FILE".getBytes()), 0); // recalls b's prefetched lock
    w.flush();
    assertEquals("FILE 3", read(b, inos[3]));
    w.release();
  }

  /**
   * A reader half-way through a prefetched batch has the next batch asked for in the background:
   * the locks of the files after the batch are held before the reader reaches them, so it does
   * not wait a round trip every 64 files.
   */
  @Test
  void halfWayThroughABatchTheNextIsAskedForInTheBackground() throws Throwable {
    var d = a.fs.mkdir(Vfs.ROOT, "sweep", 0755, ROOT);
    int files = 3 * ReadAhead.BATCH;
    long[] inos = writtenAndPublished(d.ino(), files, -1);
    eventually(() -> assertEquals(files, countEntries(b.fs, d.ino())));
    List<io.etcfs.spi.vfs.DirEntry> order = listedOrder(b, d.ino(), inos);
    for (int i = 0; i <= ReadAhead.BATCH / 2; i++) {
      read(b, b.fs.lookup(d.ino(), order.get(i).name(), ROOT).ino());
    }
    long beyond = order.get(ReadAhead.BATCH + 2).ino();
    eventually(() -> assertTrue(b.lockService.holds(beyond),
        "the lock of the file after the first batch was asked for ahead"));
    // and registered by the core, which follows the grant once its cache has reached it
    eventually(() -> {
      for (int i = ReadAhead.BATCH; i < ReadAhead.BATCH + 8; i++) {
        assertTrue(b.fs.activeInodes().contains(order.get(i).ino()), "file " + i + " held");
      }
    });
    int before = b.lockService.requests();
    for (int i = ReadAhead.BATCH / 2 + 1; i < ReadAhead.BATCH + 8; i++) {
      read(b, b.fs.lookup(d.ino(), order.get(i).name(), ROOT).ino());
    }
    assertEquals(before, b.lockService.requests(), "no request of the reader's own meanwhile");
  }

  /**
   * {@code find | sort | xargs sha256sum} over a tree of more files than the node remembered
   * names of before (4,096): find's listings (readdirplus: a look-up per entry) come long before
   * the opens, and with the kernel's names cached for 60 s the opens come without look-ups. The
   * read-ahead still finds each file's directory, so the locks come in batches, not one request
   * per file (the sweep of a 12,000-file tree took 36 s instead of 8 s).
   */
  @Test
  @Timeout(value = 240, unit = TimeUnit.SECONDS)
  void aSweepOfMoreFilesThanAFewThousandStillReadsAhead() throws Throwable {
    int dirs = 50;
    int each = 100; // 5,000 files
    long[] ds = new long[dirs];
    for (int i = 0; i < dirs; i++) {
      ds[i] = a.fs.mkdir(Vfs.ROOT, "t" + i, 0755, ROOT).ino();
      for (int j = 0; j < each; j++) { // empty: the fixture's device is small
        OpenFile w = a.fs.create(ds[i], "f" + j, 0644, 2, ROOT);
        w.release();
        a.fs.setxattr(w.ino(), EtcFs.PUBLISH, new byte[0], 0, ROOT);
      }
    }
    List<List<io.etcfs.spi.vfs.DirEntry>> listed = new java.util.ArrayList<>();
    for (long d : ds) { // find: every listing, with a look-up of every entry
      eventually(() -> assertEquals(each, countEntries(b.fs, d)));
      List<io.etcfs.spi.vfs.DirEntry> entries = b.fs.readdir(d, 0, 1000).entries();
      for (var e : entries) {
        b.fs.lookup(d, e.name(), ROOT);
      }
      listed.add(entries);
    }
    int before = b.lockService.requests();
    for (var entries : listed) { // sha256sum: opens by inode, names cached in the kernel
      for (var e : entries) {
        OpenFile r = b.fs.open(e.ino(), 0, ROOT);
        r.read(ByteBuffer.allocate(64), 0);
        r.release();
      }
    }
    int requests = b.lockService.requests() - before;
    // one or two per batch of 64 (the next batch asked for half-way through), and now and then
    // a reader's own when it reaches a file between its lock's grant and the core registering
    // it; without the read-ahead finding the files' directories, 990
    assertTrue(requests <= 4 * dirs * each / ReadAhead.BATCH,
        dirs * each + " files read in " + requests + " lock requests");
  }

  /**
   * A walk over many small directories ({@code find | xargs sha256sum} over a source tree, whose
   * directories mostly hold fewer files than a batch) asks for the locks of the directories
   * listed after the one it reads, in the order they were listed: one round trip for the lot,
   * not one per directory.
   */
  @Test
  void aWalkOverSmallDirectoriesAsksForTheNextDirectoriesLocksTogether() throws Throwable {
    int dirs = 8;
    int each = 5;
    long[] ds = new long[dirs];
    for (int i = 0; i < dirs; i++) {
      ds[i] = a.fs.mkdir(Vfs.ROOT, "small" + i, 0755, ROOT).ino();
      writtenAndPublished(ds[i], each, -1);
    }
    List<List<io.etcfs.spi.vfs.DirEntry>> listed = new java.util.ArrayList<>();
    for (long d : ds) { // find lists every directory before sha256sum opens their files
      eventually(() -> assertEquals(each, countEntries(b.fs, d)));
      listed.add(b.fs.readdir(d, 0, 1000).entries());
    }
    int before = b.lockService.requests();
    for (int i = 0; i < dirs; i++) {
      for (var e : listed.get(i)) {
        read(b, b.fs.lookup(ds[i], e.name(), ROOT).ino());
      }
    }
    assertEquals(1, b.lockService.requests() - before,
        dirs * each + " files in " + dirs + " directories: one prefetch asked for all their locks");
  }

  /** The entries of {@code inos} in n's listing order of {@code dir} (a sweep's order). */
  private List<io.etcfs.spi.vfs.DirEntry> listedOrder(FsFixture.Node n, long dir, long[] inos)
      throws FsException {
    java.util.Set<Long> ours = new java.util.HashSet<>();
    for (long i : inos) {
      ours.add(i);
    }
    return listing(n.fs, dir).stream().filter(e -> ours.contains(e.ino())).toList();
  }

  /**
   * A node that let go of the exclusive locks of files it wrote (given back a second after their
   * closes; here published) takes them back for reading together when it reads one of them
   * again, in the order it let go of them, even without a cached listing of their directory.
   */
  @Test
  void locksLetGoTogetherAreTakenBackTogether() throws Throwable {
    var d = a.fs.mkdir(Vfs.ROOT, "written", 0755, ROOT);
    int files = 20;
    long[] inos = writtenAndPublished(d.ino(), files, -1);
    int before = a.lockService.requests();
    for (int i = 0; i < files; i++) {
      assertEquals("file " + i, read(a, inos[i]));
    }
    assertEquals(1, a.lockService.requests() - before, "one request for the 20 files");
  }

  /**
   * Listing a directory reads the listings of its subdirectories ahead, in one transaction: a
   * walk of a tree another node wrote costs a round trip per directory with subdirectories, not
   * one per directory. What is read ahead is dropped like any listing when another node changes
   * the directory.
   */
  @Test
  void listingADirectoryReadsItsSubdirectoriesListingsAhead() throws Throwable {
    var top = a.fs.mkdir(Vfs.ROOT, "top", 0755, ROOT);
    int subs = 10;
    long[] dirs = new long[subs];
    for (int i = 0; i < subs; i++) {
      dirs[i] = a.fs.mkdir(top.ino(), "d" + i, 0755, ROOT).ino();
      for (int j = 0; j < 3; j++) {
        a.fs.mknod(dirs[i], "f" + j, 0644, 0, ROOT);
      }
    }
    eventually(() -> assertEquals(3, countEntries(b.fs, dirs[subs - 1])));
    // That listing may have come from etcd while b's watch still trailed: events it delivers
    // later drop what b cached, and the counts below would include the reads again.
    assertTrue(b.fs.cacheReached(fx.store.revision(), 10_000), "b's cache caught up");
    long before = b.fs.stats().storeRanges();
    assertEquals(subs, countEntries(b.fs, top.ino()));
    for (int i = 0; i < subs - 1; i++) { // the last one is cached already
      assertEquals(3, countEntries(b.fs, dirs[i]));
    }
    assertEquals(2, b.fs.stats().storeRanges() - before,
        "the top directory's listing, and its subdirectories' in one transaction");
    // their names are known complete: a name none of them has is absent without a read
    long reads = b.fs.stats().storeRanges() + b.fs.stats().storeGets();
    FsException absent = assertThrows(FsException.class,
        () -> b.fs.lookup(dirs[2], ".gitignore", ROOT));
    assertEquals(Errno.ENOENT, absent.errno());
    assertEquals(reads, b.fs.stats().storeRanges() + b.fs.stats().storeGets());
    a.fs.mknod(dirs[4], "late", 0644, 0, ROOT);
    eventually(() -> assertEquals(4, countEntries(b.fs, dirs[4])));
  }

  /**
   * Below the subdirectories, the levels further down are read ahead in the background: a walk
   * of a three-level tree another node wrote finds every listing cached once the top one is
   * listed, where each directory with subdirectories cost a round trip before.
   */
  @Test
  void listingADirectoryReadsTheLevelsBelowItInTheBackground() throws Throwable {
    var top = a.fs.mkdir(Vfs.ROOT, "deep", 0755, ROOT);
    List<Long> all = new ArrayList<>();
    List<Long> leaves = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      long one = a.fs.mkdir(top.ino(), "a" + i, 0755, ROOT).ino();
      all.add(one);
      for (int j = 0; j < 4; j++) {
        long two = a.fs.mkdir(one, "b" + j, 0755, ROOT).ino();
        all.add(two);
        for (int k = 0; k < 2; k++) {
          long three = a.fs.mkdir(two, "c" + k, 0755, ROOT).ino();
          all.add(three);
          leaves.add(three);
          a.fs.mknod(three, "f", 0644, 0, ROOT);
        }
      }
    }
    assertTrue(b.fs.cacheReached(fx.store.revision(), 10_000), "b's cache caught up");
    assertEquals(4, countEntries(b.fs, top.ino()));
    eventually(() -> {
      for (long leaf : leaves) {
        assertTrue(b.fs.listingCached(leaf), "the listing of " + leaf + " was read ahead");
      }
    });
    long before = b.fs.stats().storeRanges();
    for (long d : all) {
      assertTrue(countEntries(b.fs, d) > 0);
    }
    assertEquals(0, b.fs.stats().storeRanges() - before, "the walk read nothing");
  }

  /**
   * Files f0… in {@code dir}, each written "file i" on node a and its lock given back at once
   * (published), except the one numbered {@code kept}; their inode numbers.
   */
  private long[] writtenAndPublished(long dir, int files, int kept) throws FsException {
    long[] inos = new long[files];
    for (int i = 0; i < files; i++) {
      OpenFile w = a.fs.create(dir, "f" + i, 0644, 2, ROOT);
      w.write(ByteBuffer.wrap(("file " + i).getBytes()), 0);
      w.release();
      inos[i] = w.ino();
      if (i != kept) {
        a.fs.setxattr(w.ino(), EtcFs.PUBLISH, new byte[0], 0, ROOT);
      }
    }
    return inos;
  }

  private static String read(FsFixture.Node n, long ino) throws FsException {
    OpenFile r = n.fs.open(ino, 0, ROOT);
    try {
      ByteBuffer buf = ByteBuffer.allocate(64);
      int len = r.read(buf, 0);
      return new String(buf.array(), 0, len);
    } finally {
      r.release();
    }
  }

  @Test
  void publishingAFileCommitsItsWritesAndLetsGoOfItsLock() throws Throwable {
    OpenFile w = a.fs.create(Vfs.ROOT, "pub", 0644, 2, ROOT);
    w.write(ByteBuffer.wrap("published".getBytes()), 0);
    assertTrue(fx.store.prefix(fx.keys.extentPrefix(w.ino()), 0).kvs().isEmpty(),
        "buffered, not committed yet");
    a.fs.setxattr(w.ino(), EtcFs.PUBLISH, new byte[0], 0, ROOT);
    assertEquals(1, fx.store.prefix(fx.keys.extentPrefix(w.ino()), 0).kvs().size(),
        "published: committed");
    assertTrue(fx.store.prefix(Keys.of("/etcfs/t/locks/" + w.ino() + "/"), 0).kvs().isEmpty(),
        "published: no lock held");
    assertEquals(Errno.ENODATA, assertThrows(FsException.class,
        () -> a.fs.getxattr(w.ino(), EtcFs.PUBLISH)).errno(), "publish is an action, not stored");
    w.release();
  }

  @Test
  void appendsFromTwoNodesLandOneAfterAnother() throws Throwable {
    OpenFile x = a.fs.create(Vfs.ROOT, "log", 0644, 2 | Handle.O_APPEND, ROOT);
    OpenFile y = b.fs.open(x.ino(), 2 | Handle.O_APPEND, ROOT);
    ExecutorService pool = Executors.newFixedThreadPool(2);
    List<Future<?>> jobs = new ArrayList<>();
    for (OpenFile f : List.of(x, y)) {
      String who = f == x ? "a" : "b";
      jobs.add(pool.submit(() -> {
        for (int i = 0; i < 50; i++) {
          f.write(ByteBuffer.wrap(String.format("%s%03d\n", who, i).getBytes()), 0);
        }
        return null;
      }));
    }
    for (Future<?> j : jobs) {
      j.get(60, java.util.concurrent.TimeUnit.SECONDS);
    }
    pool.shutdown();
    x.release();
    y.release();
    OpenFile r = a.fs.open(x.ino(), 0, ROOT);
    ByteBuffer all = ByteBuffer.allocate(1000);
    int n = r.read(all, 0);
    r.release();
    assertEquals(500, n, "100 records of 5 bytes");
    List<String> lines = List.of(new String(all.array(), 0, n).split("\n"));
    assertEquals(100, new java.util.HashSet<>(lines).size(), lines.toString());
  }

  /** b's cached listing goes with the watch event of a's change, and is read again once. */
  @Test
  void aListingCachedOnOneNodeShowsTheOthersChanges() throws Throwable {
    var d = a.fs.mkdir(Vfs.ROOT, "dir", 0755, ROOT);
    a.fs.mknod(d.ino(), "one", 0644, 0, ROOT);
    eventually(() -> assertEquals(1, countEntries(b.fs, d.ino())));
    a.fs.mknod(d.ino(), "two", 0644, 0, ROOT);
    eventually(() -> assertEquals(2, countEntries(b.fs, d.ino())));
    a.fs.unlink(d.ino(), "one", ROOT);
    eventually(() -> assertEquals(List.of("two"),
        b.fs.readdir(d.ino(), 0, 10).entries().stream().map(e -> e.name()).toList()));
  }

  @Test
  void concurrentCreatesInOneDirectoryAllLand() throws Throwable {
    ExecutorService pool = Executors.newFixedThreadPool(4);
    List<Future<?>> jobs = new ArrayList<>();
    for (int t = 0; t < 4; t++) {
      EtcFs fs = t % 2 == 0 ? a.fs : b.fs;
      int id = t;
      jobs.add(pool.submit(() -> {
        for (int i = 0; i < 50; i++) {
          fs.mknod(Vfs.ROOT, "t" + id + "-" + i, 0644, 0, ROOT);
          if (i % 10 == 0) {
            fs.mkdir(Vfs.ROOT, "d" + id + "-" + i, 0755, ROOT);
          }
        }
        return null;
      }));
    }
    for (Future<?> j : jobs) {
      j.get(50, TimeUnit.SECONDS);
    }
    pool.shutdown();
    // a lists from its cache: b's last creates show once a's watch has shown them
    eventually(() -> assertEquals(220, countEntries(a.fs, Vfs.ROOT)));
    assertEquals(2 + 20, fx.store.get(fx.keys.inode(Vfs.ROOT)).map(kv ->
        io.etcfs.core.fs.meta.Codec.decodeInode(kv.value()).nlink()).orElseThrow());
  }

  @Test
  void aFencedNodeAnswersEioAndChangesNothing() throws Throwable {
    a.fenced.set(true);
    assertEquals(Errno.EIO, assertThrows(FsException.class,
        () -> a.fs.mkdir(Vfs.ROOT, "x", 0755, ROOT)).errno());
    assertEquals(Errno.EIO, assertThrows(FsException.class, () -> a.fs.getattr(Vfs.ROOT)).errno());
    // a node whose membership is gone (lease lapsed) is stopped by the generation guard
    fx.store.commit(new Txn().then(Op.delete(fx.keys.member("b"))));
    assertEquals(Errno.EIO, assertThrows(FsException.class,
        () -> b.fs.mkdir(Vfs.ROOT, "y", 0755, ROOT)).errno());
    assertTrue(fx.store.prefix(fx.keys.direntPrefix(Vfs.ROOT), 0).kvs().isEmpty());
  }

  @Test
  void undecodableKeyIsEio() throws Throwable {
    var f = a.fs.mknod(Vfs.ROOT, "f", 0644, 0, ROOT);
    fx.store.commit(new Txn().then(Op.put(fx.keys.inode(f.ino()), Keys.of("garbage"))));
    eventually(() -> assertEquals(Errno.EIO, assertThrows(FsException.class,
        () -> b.fs.getattr(f.ino())).errno()));
  }

  @Test
  void watchFailureDropsTheCacheAndRestarts() throws Throwable {
    var d = a.fs.mkdir(Vfs.ROOT, "d", 0755, ROOT);
    eventually(() -> b.fs.lookup(Vfs.ROOT, "d", ROOT));
    fx.store.compact(fx.store.revision());
    fx.store.cancelWatches();
    a.fs.rmdir(Vfs.ROOT, "d", ROOT);
    eventually(() -> assertEquals(Errno.ENOENT, assertThrows(FsException.class,
        () -> b.fs.getattr(d.ino())).errno()));
    eventually(() -> assertTrue(b.fs.watching(), "the cache watch runs again"));
  }

  @Test
  void recoveryPurgesADeadNodesOrphansAndEmptyLockTablesOnly() throws Throwable {
    OpenFile held = a.fs.create(Vfs.ROOT, "held", 0644, 2, ROOT);
    DataPathTest.write(held, 0, new byte[8192]);
    held.fsync(false);
    a.fs.unlink(Vfs.ROOT, "held", ROOT);
    OpenFile other = b.fs.create(Vfs.ROOT, "other", 0644, 2, ROOT);
    DataPathTest.write(other, 0, new byte[4096]);
    other.fsync(false);
    b.fs.unlink(Vfs.ROOT, "other", ROOT);
    assertTrue(fx.store.get(fx.keys.orphan(held.ino())).isPresent());
    assertTrue(fx.store.get(fx.keys.orphan(other.ino())).isPresent());
    long used = fx.allocator.usedBlocks();
    // An empty fcntl table left behind, and one still in use by a live owner.
    fx.store.commit(new Txn().then(Op.put(fx.keys.posixLocks(7), Keys.of("v"))));
    fx.store.commit(new Txn().then(Op.put(fx.keys.posixLocks(8), Keys.of("v")))
        .then(Op.put(Keys.of("/etcfs/t/plocks/0000000000000008/b/0000000000000001"),
            Keys.of("pid 1\nW 0 9\n"))));
    a.fenced.set(true); // a is dead: it never releases "held"

    String line = b.fs.recover(new io.etcfs.spi.fencing.DeadNode("a", a.generation));

    assertEquals("orphans purged 1, empty lock tables dropped 1", line);
    assertTrue(fx.store.get(fx.keys.orphan(held.ino())).isEmpty());
    assertTrue(fx.store.get(fx.keys.inode(held.ino())).isEmpty());
    assertEquals(used - 2, fx.allocator.usedBlocks(), "the dead node's orphan's blocks are free");
    assertTrue(fx.store.get(fx.keys.orphan(other.ino())).isPresent(), "b's own orphan stays");
    assertTrue(fx.store.get(fx.keys.posixLocks(7)).isEmpty());
    assertTrue(fx.store.get(fx.keys.posixLocks(8)).isPresent());
    assertEquals("orphans purged 0, empty lock tables dropped 0",
        b.fs.recover(new io.etcfs.spi.fencing.DeadNode("a", a.generation)), "idempotent");
    other.release();
  }
}

package io.etcfs.core.fs.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.core.fs.meta.FsKeys;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.RangeResult;
import io.etcfs.spi.meta.Txn;
import io.etcfs.support.meta.ForwardingMetaStore;
import io.etcfs.testing.MemoryMetaStore;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The revision rules of the metadata cache: what it may serve without a read, and when not. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MetaCacheTest {
  private final FsKeys keys = new FsKeys("t");
  private MemoryMetaStore memory;
  private Counting store;
  private MetaCache cache;
  private CacheWatch watch;

  @BeforeEach
  void setUp() {
    memory = new MemoryMetaStore();
    store = new Counting(memory);
    cache = new MetaCache(store, keys::mirrored, keys::entryScope);
    watch = new CacheWatch(store, keys, cache);
    watch.start();
    assertTrue(watch.running());
  }

  @AfterEach
  void tearDown() {
    watch.close();
    memory.close();
  }

  @Test
  void anotherWritersChangeReplacesTheCachedValueWithoutARead() {
    byte[] k = keys.inode(7);
    awaitApplied(put(k, "one"));
    assertEquals("one", value(cache.get(k)));
    int reads = store.reads.get();
    awaitApplied(put(k, "two"));
    assertEquals("two", value(cache.get(k)));
    assertEquals(reads, store.reads.get(), "a watched change costs no read");
  }

  @Test
  void aCommittedKeyIsServedFromTheWatchWithoutAReadBack() {
    byte[] k = keys.inode(8);
    awaitApplied(put(k, "new"));
    assertEquals("new", value(cache.get(k)));
    assertEquals(0, store.reads.get(), "inodes are mirrored from events even when never read");
  }

  @Test
  void aSmallDirectoryIsReadWholeOnceAndItsMissesNeedNoRead() {
    awaitApplied(put(keys.dirent(1, 10, "a"), "x"));
    awaitApplied(put(keys.dirent(1, 11, "b"), "x"));
    cache.invalidateAll(); // start cold: nothing known about directory 1

    assertTrue(cache.get(keys.dirent(1, 12, "missing")).isEmpty());
    assertEquals(1, store.reads.get(), "one range of the whole directory");
    assertTrue(cache.get(keys.dirent(1, 10, "a")).isPresent());
    assertTrue(cache.get(keys.dirent(1, 13, "other")).isEmpty());
    assertEquals(1, store.reads.get(), "hits and misses in a complete directory are free");

    awaitApplied(put(keys.dirent(1, 13, "other"), "x"));
    assertTrue(cache.get(keys.dirent(1, 13, "other")).isPresent(), "another node's create");
    awaitApplied(delete(keys.dirent(1, 10, "a")));
    assertTrue(cache.get(keys.dirent(1, 10, "a")).isEmpty(), "another node's unlink");
    assertEquals(1, store.reads.get());
  }

  @Test
  void aDroppedEntryMakesItsDirectoryIncompleteAgain() {
    assertTrue(cache.get(keys.dirent(2, 1, "x")).isEmpty());
    int reads = store.reads.get();
    cache.invalidate(keys.dirent(2, 5, "y"));
    assertTrue(cache.get(keys.dirent(2, 1, "x")).isEmpty());
    assertTrue(store.reads.get() > reads, "after a drop a miss is read again");
  }

  /**
   * A directory another node made is complete from the event that shows its create (nothing
   * can be in it before), unless this node dropped keys of a commit its watch has not shown
   * yet — such as a name it made in that directory while its watch lagged: until the watch
   * shows that commit, the name is missing from the cache and only a read finds it.
   */
  @Test
  void aDirectoryShownCreatedIsCompleteUnlessACommitNotShownYetWasDropped() {
    MetaCache lagging = new MetaCache(store, keys::mirrored, keys::entryScope);
    CacheWatch byHand = new CacheWatch(store, keys, lagging); // never started: events by hand
    lagging.goLive(0);
    long made = putBytes(keys.inode(40), directory(40));
    byHand.onEvents(java.util.List.of(event(keys.inode(40), directory(40), made)));
    int reads = store.reads.get();
    assertTrue(lagging.get(keys.dirent(40, 1, "absent")).isEmpty());
    assertEquals(reads, store.reads.get(), "a directory shown created is known empty");

    long made2 = putBytes(keys.inode(41), directory(41));
    long named = put(keys.dirent(41, 7, "mine"), "x"); // committed here; the watch lags
    lagging.droppedUnshown(named);
    lagging.invalidate(keys.dirent(41, 7, "mine"));
    byHand.onEvents(java.util.List.of(event(keys.inode(41), directory(41), made2)));
    assertTrue(lagging.get(keys.dirent(41, 7, "mine")).isPresent(),
        "a name committed here is found while the watch has not shown it");
    byHand.close();
  }

  private static byte[] directory(long ino) {
    return io.etcfs.core.fs.meta.Codec.inode(new io.etcfs.core.fs.meta.Inode(ino,
        io.etcfs.spi.vfs.Attr.S_IFDIR | 0755, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, null));
  }

  private long putBytes(byte[] key, byte[] value) {
    return memory.commit(new Txn().then(Op.put(key, value))).revision();
  }

  private static io.etcfs.spi.meta.WatchEvent event(byte[] key, byte[] value, long revision) {
    return new io.etcfs.spi.meta.WatchEvent(io.etcfs.spi.meta.WatchEvent.Type.PUT,
        new KeyValue(key, value, revision, revision, 1, 0));
  }

  @Test
  void aLargeDirectoryIsNotReadWhole() {
    for (int i = 0; i <= MetaCache.SCOPE_LIMIT; i++) {
      memory.commit(new Txn().then(Op.put(keys.dirent(3, i, "n" + i), bytes("x"))));
    }
    awaitApplied(memory.revision());
    cache.invalidateAll();
    assertTrue(cache.get(keys.dirent(3, 5000, "missing")).isEmpty());
    int reads = store.reads.get();
    assertTrue(cache.get(keys.dirent(3, 5001, "missing2")).isEmpty());
    assertEquals(reads + 1, store.reads.get(), "misses in a large directory are single reads");
  }

  @Test
  void aFillOlderThanAnAppliedEventIsNotStored() {
    byte[] k = keys.inode(9);
    awaitApplied(put(k, "old"));
    cache.invalidateAll();
    // Between the fill's read and its store, the key is deleted and the event applied.
    store.afterRange = () -> {
      store.afterRange = null;
      awaitApplied(delete(k));
    };
    assertEquals("old", value(cache.get(k)), "the read itself saw the old value");
    int reads = store.reads.get();
    assertTrue(cache.get(k).isEmpty(), "the delete wins over the older fill");
    assertEquals(reads, store.reads.get());
  }

  /**
   * A directory filled while the cache starts over (it overflowed) must not end up complete with
   * its keys gone: then every name in it was answered absent, and {@code rm -rf} on that node
   * skipped files it listed and failed with "Directory not empty".
   */
  @Test
  void aFillRacingTheCacheStartingOverNeverLosesPresentNames() throws Exception {
    byte[] present = keys.dirent(5, 1, "present");
    awaitApplied(put(present, "x"));
    cache.invalidateAll();
    assertFillDuringDropKeeps(present, cache::invalidateAll);
  }

  /** The same for the drop of one key of the directory (a commit the watch did not confirm). */
  @Test
  void aFillRacingTheDropOfOneKeyNeverLosesPresentNames() throws Exception {
    byte[] present = keys.dirent(6, 1, "present");
    awaitApplied(put(present, "x"));
    cache.invalidateAll();
    assertFillDuringDropKeeps(present, () -> cache.invalidate(present));
  }

  /**
   * Runs {@code drop}; in its middle (after it dropped scopes, before it dropped keys) another
   * thread looks up {@code present}, which reads its whole directory, and is given a moment to
   * finish first. Afterwards the name must still be found.
   */
  private void assertFillDuringDropKeeps(byte[] present, Runnable drop) throws Exception {
    java.util.concurrent.ExecutorService other = java.util.concurrent.Executors
        .newSingleThreadExecutor();
    try {
      java.util.List<java.util.concurrent.Future<Optional<KeyValue>>> fill =
          new java.util.ArrayList<>();
      cache.whileDropping = () -> {
        cache.whileDropping = null;
        fill.add(other.submit(() -> cache.get(present)));
        try {
          fill.get(0).get(300, TimeUnit.MILLISECONDS); // done already where drops do not lock
        } catch (java.util.concurrent.TimeoutException waitsForTheDrop) {
          // the fill waits for the drop to end: what is wanted
        } catch (Exception e) {
          throw new AssertionError(e);
        }
      };
      drop.run();
      assertTrue(fill.get(0).get(10, TimeUnit.SECONDS).isPresent(), "the fill read the name");
      assertTrue(cache.get(present).isPresent(), "a name in etcd answered absent");
    } finally {
      other.shutdownNow();
    }
  }

  @Test
  void aDarkCacheServesNothingAndWakesWaiters() {
    byte[] k = keys.inode(10);
    awaitApplied(put(k, "v"));
    cache.goDark();
    int reads = store.reads.get();
    cache.get(k);
    cache.get(k);
    assertEquals(reads + 2, store.reads.get(), "no watch, no cache");
    assertFalse(cache.awaitRevision(Long.MAX_VALUE, 10_000), "a dark cache never says caught up");
  }

  /**
   * A watch that ends (a lost connection) resumes right after the last event it applied: what
   * changed while no watch ran reaches the listener (the kernel's caches) too, and the cache,
   * started empty, serves only what is current.
   */
  @Test
  void aWatchResumesAfterItsLastEventSoTheListenerMissesNothing() throws Exception {
    java.util.List<io.etcfs.spi.meta.WatchEvent> told = endWatchWhileDown();
    byte[] k = keys.inode(11);
    long gap = put(k, "two");
    long gone = delete(keys.inode(12));
    store.down = false;
    awaitTrue(watch::running, "the watch runs again");
    awaitTrue(() -> told.stream().anyMatch(e -> e.kv().modRevision() == gone),
        "the changes made while no watch ran were told");
    assertTrue(told.stream().anyMatch(e -> e.kv().modRevision() == gap));
    assertEquals("two", value(cache.get(k)));
    awaitApplied(put(k, "three"));
    assertEquals("three", value(cache.get(k)));
  }

  /** History compacted away: the new watch starts afresh, and the cache is still exact. */
  @Test
  void aWatchWhoseHistoryWasCompactedStartsAfresh() throws Exception {
    java.util.List<io.etcfs.spi.meta.WatchEvent> told = endWatchWhileDown();
    byte[] k = keys.inode(13);
    long gap = put(k, "two");
    memory.compact(put(keys.inode(14), "later"));
    store.down = false; // the resumed watch fails (compacted), the next one starts afresh
    long three = put(k, "three");
    awaitTrue(() -> cache.awaitRevision(three, 50), "a watch reached " + three);
    assertEquals("three", value(cache.get(k)));
    assertFalse(told.stream().anyMatch(e -> e.kv().modRevision() == gap), "compacted: not told");
  }

  /**
   * Ends the watch as a lost connection does, with etcd out of reach so that no new watch can
   * start until the test sets {@code store.down} false; returns what the listener is told.
   */
  private java.util.List<io.etcfs.spi.meta.WatchEvent> endWatchWhileDown() throws Exception {
    java.util.List<io.etcfs.spi.meta.WatchEvent> told =
        new java.util.concurrent.CopyOnWriteArrayList<>();
    watch.setListener(told::addAll);
    awaitApplied(put(keys.inode(99), "before"));
    store.down = true;
    memory.failWatches(io.etcfs.spi.meta.MetaStoreException.Kind.UNAVAILABLE);
    awaitTrue(() -> !watch.running(), "the cache went dark");
    return told;
  }

  private static void awaitTrue(java.util.function.BooleanSupplier ok, String what)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!ok.getAsBoolean()) {
      assertTrue(System.nanoTime() < deadline, "not within 20 s: " + what);
      Thread.sleep(5);
    }
  }

  private void awaitApplied(long revision) {
    assertTrue(cache.awaitRevision(revision, 10_000), "the watch reached " + revision);
  }

  private long put(byte[] key, String value) {
    return memory.commit(new Txn().then(Op.put(key, bytes(value)))).revision();
  }

  private long delete(byte[] key) {
    return memory.commit(new Txn().then(Op.delete(key))).revision();
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static String value(Optional<KeyValue> kv) {
    return kv.map(KeyValue::valueString).orElse(null);
  }

  /** Counts reads, and can run something between a range read and its return. */
  private static final class Counting extends ForwardingMetaStore {
    final AtomicInteger reads = new AtomicInteger();
    volatile Runnable afterRange;
    /** Every range read fails, as with etcd out of reach. */
    volatile boolean down;

    Counting(MetaStore delegate) {
      super(delegate);
    }

    @Override
    public Optional<KeyValue> get(byte[] key) {
      reads.incrementAndGet();
      return delegate.get(key);
    }

    @Override
    public RangeResult range(byte[] from, byte[] to, int limit) {
      if (down) {
        throw new io.etcfs.spi.meta.MetaStoreException(
            io.etcfs.spi.meta.MetaStoreException.Kind.UNAVAILABLE, "test: store down", null);
      }
      RangeResult r = delegate.range(from, to, limit);
      if (!new String(from, StandardCharsets.UTF_8).equals("/etcfs/t/fs")) {
        reads.incrementAndGet();
      }
      Runnable hook = afterRange;
      if (hook != null) {
        hook.run();
      }
      return r;
    }
  }
}

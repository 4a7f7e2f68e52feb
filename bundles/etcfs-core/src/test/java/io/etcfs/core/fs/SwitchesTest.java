package io.etcfs.core.fs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.spi.fs.FsRecord;
import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.OpenFile;
import io.etcfs.spi.vfs.Vfs;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The live switch's protocol (issue #15) between two engines on one store: a request stops and
 * drains every node, the cutover rewrites the record, and every node follows — or a node that
 * cannot take part makes the switch roll back, and everyone resumes on what it had. The
 * framework's part (bundles, configurations, bindings) is a fake here; SwitchIT runs the real one.
 */
@Timeout(120)
class SwitchesTest {
  static final Caller ROOT = Caller.ROOT;

  @TempDir Path dir;
  FsFixture fx;
  FsFixture.Node a;
  FsFixture.Node b;
  Switches sa;
  Switches sb;
  final FakeBinder ba = new FakeBinder();
  final FakeBinder bb = new FakeBinder();

  /** Records what the participant asked of the framework; fails {@code prepare} if told to. */
  static final class FakeBinder implements Switches.Binder {
    final List<String> calls = new CopyOnWriteArrayList<>();
    volatile String refuse;
    volatile String bindFails;
    volatile List<String> areas = List.of("freemap/");

    @Override
    public List<String> available(String kind) {
      return kind.equals(Switches.LOCK) ? List.of("etcd", "other") : List.of("arena", "shared");
    }

    @Override
    public void prepare(String kind, String name) {
      calls.add("prepare " + kind + " " + name);
      if (refuse != null) {
        throw new IllegalStateException(refuse);
      }
    }

    @Override
    public void bind(String lock, String alloc) {
      calls.add("bind " + lock + " " + alloc);
      if (bindFails != null) {
        throw new IllegalStateException(bindFails);
      }
    }

    @Override
    public void retireOthers(String lock, String alloc) {
      calls.add("retire others than " + lock + " " + alloc);
    }

    @Override
    public void unprepare(String kind, String name) {
      calls.add("unprepare " + kind + " " + name);
    }

    @Override
    public List<String> stateAreas(String kind, String name) {
      return areas;
    }
  }

  /** Node a's view of the store: its commits can be slowed (etcd's fsync on a busy disk). */
  static final class Slow extends io.etcfs.support.meta.ForwardingMetaStore {
    volatile long delayMs;

    Slow(io.etcfs.spi.meta.MetaStore store) {
      super(store);
    }

    @Override
    public io.etcfs.spi.meta.TxnResult commit(io.etcfs.spi.meta.Txn txn) {
      long ms = delayMs;
      if (ms > 0) {
        try {
          Thread.sleep(ms);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return delegate.commit(txn);
    }
  }

  Slow slow;

  @BeforeEach
  void setUp() throws Exception {
    fx = new FsFixture(dir, 0);
    slow = new Slow(fx.store);
    a = fx.new Node("a", EtcFs.DEFAULT_BUFFER_BYTES, slow);
    b = fx.node("b");
    sa = new Switches(fx.store, FsFixture.FS, a, a.fs, ba).start();
    sb = new Switches(fx.store, FsFixture.FS, b, b.fs, bb).start();
  }

  @AfterEach
  void tearDown() throws Exception {
    sa.close();
    sb.close();
    a.fs.close();
    b.fs.close();
    fx.close();
  }

  FsRecord record() {
    return FsRecord.decode(fx.store.get(fx.keys.record()).orElseThrow().value());
  }

  static ByteBuffer bytes(String s) {
    return ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8));
  }

  String read(FsFixture.Node n, String name) throws Exception {
    OpenFile r = n.fs.open(n.fs.lookup(Vfs.ROOT, name, ROOT).ino(), 0, ROOT);
    ByteBuffer buf = ByteBuffer.allocate(256);
    int got = r.read(buf, 0);
    r.release();
    return new String(buf.array(), 0, Math.max(0, got), StandardCharsets.UTF_8);
  }

  @Test
  void everyNodeDrainsTheCutoverRewritesTheRecordAndWritesGoOnUnderTheNewBackend()
      throws Exception {
    OpenFile f = a.fs.create(Vfs.ROOT, "f", 0644, 2, ROOT);
    f.write(bytes("before the switch;"), 0); // buffered under a's exclusive lock, not synced
    long before = a.fs.strategyRevision();
    String said = sb.request(Switches.LOCK, "other", Duration.ofSeconds(60));
    assertTrue(said.startsWith("switched the lock backend from etcd to other (switch 1, 2 nodes:"
        + " a, b)\npause: "), said);
    assertTrue(said.endsWith("undo: lock switch etcd"), said);
    assertEquals("other", record().lockBackend());
    assertTrue(a.fs.strategyRevision() > before, "a follows the record");
    assertEquals(a.fs.strategyRevision(), b.fs.strategyRevision());
    // what a buffered under the old backend was committed by its drain
    assertEquals("before the switch;", read(b, "f"));
    // and the open file is written on under the new one
    f.write(bytes(" after it"), 18);
    f.release();
    assertEquals("before the switch; after it", read(b, "f"));
    for (FakeBinder binder : List.of(ba, bb)) {
      assertEquals(List.of("prepare lock other", "bind other arena",
          "retire others than other arena"), binder.calls);
    }
    List<String> history = sa.history();
    assertEquals(1, history.size(), history.toString());
    assertTrue(history.get(0).matches("1 lock etcd -> other .* by b: done, pause \\d+ ms"),
        history.get(0));
    assertEquals("the cluster uses lock backend other already; nothing to do",
        sa.request(Switches.LOCK, "other", Duration.ofSeconds(60)));
  }

  @Test
  void aNodeThatCannotTakePartRollsTheSwitchBackForEveryone() throws Exception {
    bb.refuse = "bundle io.etcfs.lock-other does not start: broken";
    OpenFile f = a.fs.create(Vfs.ROOT, "g", 0644, 2, ROOT);
    f.write(bytes("kept"), 0);
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> sa.request(Switches.LOCK, "other", Duration.ofSeconds(60)));
    assertTrue(e.getMessage().contains("rolled back: b: bundle io.etcfs.lock-other does not"
        + " start: broken"), e.getMessage());
    assertEquals("etcd", record().lockBackend(), "the record is unchanged");
    // a stopped and drained, then resumed on the old backend: its writes go on
    f.write(bytes(" and more"), 4);
    f.release();
    assertEquals("kept and more", read(b, "g"));
    assertTrue(sa.history().get(0).contains("rolled back: b: bundle"), sa.history().toString());
    // a, which prepared the target, lets it go again (b's prepare failed: nothing to let go)
    long deadline = System.nanoTime() + 20_000_000_000L;
    while (ba.calls.contains("prepare lock other") && !ba.calls.contains("unprepare lock other")
        && System.nanoTime() < deadline) {
      Thread.sleep(20); // a sees the rollback on its next look
    }
    assertEquals(ba.calls.contains("prepare lock other"),
        ba.calls.contains("unprepare lock other"), ba.calls.toString());
  }

  /**
   * An allocator switch clears what the new allocator kept the last time it was in use, in the
   * cutover itself, and nothing else: the ownership records and the files stay.
   */
  @Test
  void anAllocatorSwitchClearsTheNewAllocatorsStateInTheCutover() throws Exception {
    OpenFile f = a.fs.create(Vfs.ROOT, "h", 0644, 2, ROOT);
    f.write(bytes("data"), 0);
    fx.store.commit(new io.etcfs.spi.meta.Txn()
        .then(io.etcfs.spi.meta.Op.put(key("freemap/v"), "3".getBytes(StandardCharsets.UTF_8)))
        .then(io.etcfs.spi.meta.Op.put(key("freemap/f/0000000000000100"),
            "64".getBytes(StandardCharsets.UTF_8))));
    String said = sa.request(Switches.ALLOC, "shared", Duration.ofSeconds(60));
    assertTrue(said.startsWith("switched the allocator from arena to shared"), said);
    assertTrue(said.endsWith("undo: alloc switch arena"), said);
    assertEquals("shared", record().allocBackend());
    assertEquals(0, fx.store.prefix(key("freemap/"), 0).kvs().size(), "the stale free map");
    assertTrue(fx.store.prefix(key("blocks/"), 0).kvs().size() > 0, "the ownership records");
    f.release();
    assertEquals("data", read(b, "h"));
    assertTrue(ba.calls.contains("bind etcd shared"), ba.calls.toString());
  }

  @Test
  void anAllocatorDeclaringAnAreaASwitchMayNotClearIsNotSwitchedTo() throws Exception {
    ba.areas = List.of("blocks/");
    bb.areas = List.of("blocks/");
    int records = fx.store.prefix(key("blocks/"), 0).kvs().size();
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> sa.request(Switches.ALLOC, "shared", Duration.ofSeconds(60)));
    assertTrue(e.getMessage().contains("rolled back: allocator shared declares 'blocks/' as its"
        + " state, which a switch may not clear"), e.getMessage());
    assertEquals("arena", record().allocBackend());
    assertEquals(records, fx.store.prefix(key("blocks/"), 0).kvs().size());
  }

  /**
   * A node that cannot bind the new backends after the cutover (nothing can roll a cutover
   * back) says so under the switch's history, and the asker reports it at once instead of
   * waiting for that node to resume.
   */
  @Test
  void aNodeThatCannotFollowTheCutoverIsReportedToTheAsker() throws Exception {
    bb.bindFails = "component FAILED_ACTIVATION";
    long t0 = System.nanoTime();
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> sa.request(Switches.LOCK, "other", Duration.ofSeconds(60)));
    assertTrue(e.getMessage().contains("cut over, but b: cannot bind lock backend other and"
        + " allocator arena: component FAILED_ACTIVATION"), e.getMessage());
    assertTrue(System.nanoTime() - t0 < 30_000_000_000L, "reported without waiting it out");
    assertEquals("other", record().lockBackend());
    assertTrue(b.fs.switchStopped(), "b holds its gate closed");
    bb.bindFails = null; // b follows on its next look
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (b.fs.switchStopped() && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
    assertTrue(!b.fs.switchStopped(), "b followed once it could bind");
  }

  /**
   * A file whose create is still queued under its directory's delegation when the switch
   * starts: what was written to it under its provisional lock is committed by the drain (the
   * create commits with its lock, which the drain then lets go), not dropped with that lock.
   */
  @Test
  void dataWrittenUnderAQueuedCreateIsCommittedByTheDrain() throws Exception {
    long e = a.fs.mkdir(Vfs.ROOT, "e", 0755, ROOT).ino(); // delegated to a from its mkdir
    slow.delayMs = 100;
    OpenFile f = a.fs.create(e, "queued", 0644, 2, ROOT);
    f.write(bytes("written while its create was queued"), 0);
    String said = sb.request(Switches.LOCK, "other", Duration.ofSeconds(60));
    assertTrue(said.startsWith("switched the lock backend"), said);
    slow.delayMs = 0;
    f.release();
    OpenFile r = b.fs.open(b.fs.lookup(e, "queued", ROOT).ino(), 0, ROOT);
    ByteBuffer buf = ByteBuffer.allocate(256);
    int got = r.read(buf, 0);
    r.release();
    assertEquals("written while its create was queued",
        new String(buf.array(), 0, Math.max(0, got), StandardCharsets.UTF_8));
  }

  byte[] key(String rel) {
    return io.etcfs.spi.fs.Keyspace.of(FsFixture.FS).bytes(rel);
  }

  @Test
  void badRequestsChangeNothing() throws Exception {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> sa.request(Switches.LOCK, "nosuch", Duration.ofSeconds(10)));
    assertEquals("no lock backend 'nosuch' here (installed: etcd, other)", e.getMessage());
    assertEquals("the cluster uses lock backend etcd already; nothing to do",
        sa.request(Switches.LOCK, "etcd", Duration.ofSeconds(10)));
    assertEquals(List.of(), ba.calls);
    assertEquals(List.of(), sa.history());
  }
}

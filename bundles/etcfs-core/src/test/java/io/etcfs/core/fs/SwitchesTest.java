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

    @Override
    public List<String> available(String kind) {
      return kind.equals(Switches.LOCK) ? List.of("etcd", "other") : List.of("arena");
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
    }

    @Override
    public void retireOthers(String lock, String alloc) {
      calls.add("retire others than " + lock + " " + alloc);
    }

    @Override
    public void unprepare(String kind, String name) {
      calls.add("unprepare " + kind + " " + name);
    }
  }

  @BeforeEach
  void setUp() throws Exception {
    fx = new FsFixture(dir, 0);
    a = fx.node("a");
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
    assertTrue(ba.calls.contains("unprepare lock other"), ba.calls.toString());
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

package io.etcfs.core.fs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.etcfs.spi.vfs.Attr;
import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.OpenFile;
import io.etcfs.spi.vfs.SetAttr;
import io.etcfs.spi.vfs.Vfs;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The attribute rules Linux applies and the kernel leaves to a FUSE filesystem: set-ID bits a
 * change by an unprivileged caller takes away, supplementary groups, explicit times against
 * buffered data, the largest file size.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FileAttributeRulesTest {
  static final Caller ROOT = Caller.ROOT;
  static final Caller ALICE = new Caller(1000, 1000, 1, List.of());
  static final Caller BOB = new Caller(1001, 1001, 2, List.of());
  static final int WRONLY = 1;
  static final int O_TRUNC = 01000;
  static final long Y2020 = 1_577_836_800_000_000_000L;

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

  private Attr file(String name, int mode, int gid) throws Exception {
    Attr f = a.fs.mknod(Vfs.ROOT, name, Attr.S_IFREG | 0644, 0, ROOT);
    a.fs.setattr(f.ino(), SetAttr.owner(1000, gid), ROOT);
    return a.fs.setattr(f.ino(), SetAttr.mode(mode), ROOT);
  }

  private int writeAs(Caller who, long ino) throws Exception {
    OpenFile h = a.fs.open(ino, WRONLY, who);
    h.write(ByteBuffer.wrap(new byte[] {1}), 0);
    h.release();
    return a.fs.getattr(ino).mode() & 07777;
  }

  @Test
  void aWriteByAnyoneButRootTakesTheSetIdBitsAway() throws Exception {
    assertEquals(06777, writeAs(ROOT, file("root", 06777, 1000).ino()), "root keeps them");
    assertEquals(0777, writeAs(BOB, file("other", 04777, 1000).ino()));
    assertEquals(0777, writeAs(BOB, file("both", 06777, 1000).ino()));
    assertEquals(0777, writeAs(ALICE, file("owner", 06777, 1000).ino()), "the owner too");
  }

  @Test
  void setGroupIdWithoutGroupExecuteGoesOnlyForCallersOutsideTheGroup() throws Exception {
    Caller member = new Caller(1001, 1001, 3, List.of(1000));
    assertEquals(02767, writeAs(member, file("member", 02767, 1000).ino()));
    assertEquals(0767, writeAs(BOB, file("stranger", 02767, 1000).ino()));
    assertEquals(0757, writeAs(member, file("exec", 02757, 1000).ino()),
        "a set-group-ID executable loses it whoever writes");
  }

  @Test
  void truncateByANonOwnerTakesThemAwayAndMayDropThemByChmod() throws Exception {
    Attr f = file("t", 06777, 1000);
    a.fs.setattr(f.ino(), SetAttr.size(0), BOB);
    assertEquals(0777, a.fs.getattr(f.ino()).mode() & 07777);
    Attr g = file("k", 06777, 1000);
    // what the kernel sends, in the truncating caller's name, before it truncates
    assertEquals(0777, a.fs.setattr(g.ino(), SetAttr.mode(0777), BOB).mode() & 07777);
    NamespaceTest.errno(Errno.EPERM, () -> a.fs.setattr(g.ino(), SetAttr.mode(0775), BOB));
    NamespaceTest.errno(Errno.EPERM, () -> a.fs.setattr(g.ino(), SetAttr.mode(04777), BOB));
    Attr h = file("o", 04777, 1000);
    a.fs.open(h.ino(), WRONLY | O_TRUNC, BOB).release();
    assertEquals(0777, a.fs.getattr(h.ino()).mode() & 07777, "open(O_TRUNC)");
  }

  @Test
  void chownKeepsNoSetUserIdEvenForRoot() throws Exception {
    Attr f = file("c", 06777, 1000);
    assertEquals(0777, a.fs.setattr(f.ino(), SetAttr.owner(1001, 1001), ROOT).mode() & 07777);
    Attr g = file("d", 06767, 1000);
    assertEquals(02767, a.fs.setattr(g.ino(), SetAttr.owner(1001, null), ROOT).mode() & 07777,
        "set-group-ID without group-execute is no privilege");
  }

  @Test
  void supplementaryGroupsCountAndAreReadOnlyWhenNeeded() throws Exception {
    AtomicInteger reads = new AtomicInteger();
    Caller alice = Caller.withGroupsFrom(1000, 1000, 4, () -> {
      reads.incrementAndGet();
      return List.of(2000, 2001);
    });
    Attr f = file("g", 0644, 1000);
    assertEquals(1000, a.fs.setattr(f.ino(), SetAttr.owner(null, 1000), alice).gid());
    assertEquals(0, reads.get(), "the primary group settles it");
    assertEquals(2001, a.fs.setattr(f.ino(), SetAttr.owner(null, 2001), alice).gid());
    NamespaceTest.errno(Errno.EPERM, () -> a.fs.setattr(f.ino(), SetAttr.owner(null, 3000), alice));
    assertEquals(1, reads.get(), "read once per caller");
    Attr s = a.fs.setattr(f.ino(), SetAttr.mode(02755), alice);
    assertEquals(02755, s.mode() & 07777, "set-group-ID for a group it is in");
  }

  @Test
  void aSetGroupIdDirectoryHandsItsGroupDownButNotThePrivilegeToStrangers() throws Exception {
    Attr shared = a.fs.mkdir(Vfs.ROOT, "shared", 0777, ROOT);
    a.fs.setattr(shared.ino(), SetAttr.owner(0, 4321), ROOT);
    a.fs.setattr(shared.ino(), SetAttr.mode(02777), ROOT);
    Attr sub = a.fs.mkdir(shared.ino(), "sub", 0755, BOB);
    assertEquals(02755, sub.mode() & 07777);
    assertEquals(4321, sub.gid());
    Attr stranger = a.fs.mknod(shared.ino(), "s", Attr.S_IFREG | 02755, 0, BOB);
    assertEquals(0755, stranger.mode() & 07777);
    Caller member = Caller.withGroupsFrom(1001, 1001, 5, () -> List.of(4321));
    Attr mine = a.fs.mknod(shared.ino(), "m", Attr.S_IFREG | 02755, 0, member);
    assertEquals(02755, mine.mode() & 07777);
    assertEquals(4321, mine.gid());
  }

  @Test
  void anExplicitTimeWinsOverDataWrittenBeforeIt() throws Exception {
    OpenFile h = a.fs.create(Vfs.ROOT, "tar", 0644, WRONLY, ROOT);
    h.write(ByteBuffer.wrap(new byte[5000]), 0);
    a.fs.setattr(h.ino(), SetAttr.times(Y2020, Y2020), ROOT); // futimens before close
    assertEquals(Y2020, a.fs.getattr(h.ino()).mtimeNs());
    h.flush();
    h.release();
    assertEquals(Y2020, a.fs.getattr(h.ino()).mtimeNs(), "close kept the time");
    assertEquals(5000, a.fs.getattr(h.ino()).size());
  }

  @Test
  void anExplicitTimeSetElsewhereWinsOverDataBufferedHere() throws Throwable {
    OpenFile h = a.fs.create(Vfs.ROOT, "far", 0644, WRONLY, ROOT);
    h.write(ByteBuffer.wrap(new byte[5000]), 0);
    TwoNodesTest.eventually(() -> b.fs.lookup(Vfs.ROOT, "far", ROOT));
    b.fs.setattr(h.ino(), SetAttr.times(Y2020, Y2020), ROOT);
    h.release();
    TwoNodesTest.eventually(() -> assertEquals(Y2020, b.fs.getattr(h.ino()).mtimeNs()));
    assertEquals(Y2020, a.fs.getattr(h.ino()).mtimeNs());
    assertEquals(5000, b.fs.getattr(h.ino()).size());
  }

  /**
   * The setattr's node has not seen the writer's fence go dirty (its watch trails, as under
   * load): it must still have the buffered data committed before its explicit time, or the
   * writer's commit at close stamps its own time over it. (CoherenceIT's
   * aTimeSetOnOneNodeWinsOverDataAnotherNodeCommitsLater, under load.)
   */
  @Test
  void anExplicitTimeSetWhereTheWritersFenceDoesNotShowYetStillWins() throws Throwable {
    java.util.concurrent.atomic.AtomicBoolean hide = new java.util.concurrent.atomic.AtomicBoolean();
    java.util.concurrent.atomic.AtomicReference<byte[]> hidden = new java.util.concurrent.atomic.AtomicReference<>();
    io.etcfs.spi.meta.MetaStore trailing = new io.etcfs.support.meta.ForwardingMetaStore(fx.store) {
      @Override
      public io.etcfs.spi.meta.Watch watch(byte[] prefix, long from,
          io.etcfs.spi.meta.WatchListener listener) {
        return super.watch(prefix, from, new io.etcfs.spi.meta.WatchListener() {
          @Override
          public void onEvents(List<io.etcfs.spi.meta.WatchEvent> events) {
            listener.onEvents(events.stream().filter(e -> !hide.get()
                || !java.util.Arrays.equals(e.kv().key(), hidden.get())).toList());
          }

          @Override
          public void onError(io.etcfs.spi.meta.MetaStoreException error) {
            listener.onError(error);
          }

          @Override
          public void onProgress(long revision) {
            listener.onProgress(revision);
          }
        });
      }
    };
    FsFixture.Node c = fx.new Node("c", EtcFs.DEFAULT_BUFFER_BYTES, trailing); // mounted first
    try {
      OpenFile first = a.fs.create(Vfs.ROOT, "behind", 0644, WRONLY, ROOT);
      long ino = first.ino();
      hidden.set(fx.keys.inodeFence(ino));
      first.write(ByteBuffer.wrap(new byte[100]), 0);
      first.release(); // committed, the fence declared clean: readers need no recall
      TwoNodesTest.eventually(() -> assertEquals(100, c.fs.getattr(ino).size()));
      hide.set(true); // c's watch never shows the raise the next write makes
      OpenFile again = a.fs.open(ino, WRONLY, ROOT);
      again.write(ByteBuffer.wrap(new byte[5000]), 0);
      c.fs.setattr(ino, SetAttr.times(Y2020, Y2020), ROOT);
      again.release();
      TwoNodesTest.eventually(() -> assertEquals(5000, b.fs.getattr(ino).size()));
      assertEquals(Y2020, b.fs.getattr(ino).mtimeNs(), "the explicit time, set after the write");
    } finally {
      c.fs.close();
    }
  }

  @Test
  void aFileIsAsLargeAsTheLargestFileSizeNotTheDevice() throws Exception {
    Attr f = a.fs.mknod(Vfs.ROOT, "sparse", Attr.S_IFREG | 0644, 0, ROOT);
    long twentyTiB = 20L << 40;
    assertEquals(twentyTiB, a.fs.setattr(f.ino(), SetAttr.size(twentyTiB), ROOT).size());
    OpenFile h = a.fs.open(f.ino(), 0, ROOT);
    ByteBuffer tail = ByteBuffer.allocate(10);
    assertEquals(10, h.read(tail, twentyTiB - 10));
    assertArrayEquals(new byte[10], tail.array());
    h.release();
    NamespaceTest.errno(Errno.EFBIG,
        () -> a.fs.setattr(f.ino(), SetAttr.size(DataPath.MAX_FILE + 1), ROOT));
    assertEquals(twentyTiB, a.fs.getattr(f.ino()).size());
    assertFalse(a.fs.getattr(f.ino()).blocks() > 0, "a hole takes no blocks");
  }
}

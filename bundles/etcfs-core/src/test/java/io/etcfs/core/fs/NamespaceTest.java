package io.etcfs.core.fs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.spi.vfs.Attr;
import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.DirEntry;
import io.etcfs.spi.vfs.DirPage;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.SetAttr;
import io.etcfs.spi.vfs.Vfs;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NamespaceTest {
  static final Caller ROOT = Caller.ROOT;
  static final Caller ALICE = new Caller(1000, 1000, 1, List.of());
  static final Caller BOB = new Caller(1001, 1001, 2, List.of());
  static final long R = Vfs.ROOT;

  @TempDir Path dir;
  FsFixture fx;
  EtcFs fs;

  @BeforeEach
  void setUp() throws Exception {
    fx = new FsFixture(dir, 0);
    fs = fx.node("n1").fs;
  }

  @AfterEach
  void tearDown() throws Exception {
    fs.close();
    fx.close();
  }

  static void errno(int expected, Executable call) {
    FsException e = assertThrows(FsException.class, call);
    assertEquals(expected, e.errno(), e.getMessage());
  }

  @Test
  void formatCreatesTheRoot() throws Exception {
    Attr root = fs.getattr(R);
    assertTrue(root.isDirectory());
    assertEquals(Attr.S_IFDIR | 0755, root.mode());
    assertEquals(2, root.nlink());
    assertEquals(0, root.uid());
    assertEquals(R, fs.resolve("/", ROOT).ino());
    assertEquals(R, fs.lookup(R, "..", ROOT).ino());
  }

  @Test
  void mkdirAndLinkCounts() throws Exception {
    Attr a = fs.mkdir(R, "a", 0750, ALICE);
    assertEquals(Attr.S_IFDIR | 0750, a.mode());
    assertEquals(2, a.nlink());
    assertEquals(3, fs.getattr(R).nlink());
    fs.mkdir(a.ino(), "b", 0755, ALICE);
    assertEquals(3, fs.getattr(a.ino()).nlink());
    assertEquals(a.ino(), fs.lookup(fs.resolve("/a/b", ROOT).ino(), "..", ROOT).ino());
    errno(Errno.EEXIST, () -> fs.mkdir(R, "a", 0755, ROOT));
    errno(Errno.ENOTEMPTY, () -> fs.rmdir(R, "a", ROOT));
    fs.rmdir(a.ino(), "b", ROOT);
    fs.rmdir(R, "a", ROOT);
    assertEquals(2, fs.getattr(R).nlink());
    errno(Errno.ENOENT, () -> fs.lookup(R, "a", ROOT));
    errno(Errno.ENOENT, () -> fs.getattr(a.ino()));
  }

  @Test
  void badNames() {
    errno(Errno.EINVAL, () -> fs.mkdir(R, "a/b", 0755, ROOT));
    errno(Errno.EINVAL, () -> fs.mknod(R, "a\0b", 0644, 0, ROOT));
    errno(Errno.EINVAL, () -> fs.lookup(R, "", ROOT));
    errno(Errno.ENAMETOOLONG, () -> fs.mkdir(R, "x".repeat(256), 0755, ROOT));
    errno(Errno.EEXIST, () -> fs.mkdir(R, ".", 0755, ROOT));
    errno(Errno.EINVAL, () -> fs.rmdir(R, ".", ROOT));
    errno(Errno.ENOTEMPTY, () -> fs.rmdir(R, "..", ROOT));
    errno(Errno.EISDIR, () -> fs.unlink(R, ".", ROOT));
  }

  @Test
  void nameOf255BytesIsFine() throws Exception {
    String name = "é".repeat(127) + "x";
    assertEquals(255, name.getBytes(StandardCharsets.UTF_8).length);
    fs.mknod(R, name, 0644, 0, ROOT);
    assertEquals(name, fs.readdir(R, 0, 10).entries().get(0).name());
  }

  @Test
  void mknodTypes() throws Exception {
    assertEquals(Attr.S_IFIFO, fs.mknod(R, "p", Attr.S_IFIFO | 0644, 0, ROOT).mode() & Attr.S_IFMT);
    assertEquals(Attr.S_IFSOCK, fs.mknod(R, "s", Attr.S_IFSOCK | 0644, 0, ROOT).mode()
        & Attr.S_IFMT);
    Attr c = fs.mknod(R, "c", Attr.S_IFCHR | 0600, 0x0103, ROOT);
    assertEquals(0x0103, fs.getattr(c.ino()).rdev());
    assertEquals(Attr.S_IFBLK, fs.mknod(R, "b", Attr.S_IFBLK | 0600, 7, ROOT).mode() & Attr.S_IFMT);
    assertEquals(Attr.S_IFREG | 0644, fs.mknod(R, "r", 0644, 0, ROOT).mode());
    errno(Errno.EPERM, () -> fs.mknod(R, "d", Attr.S_IFDIR | 0755, 0, ROOT));
    errno(Errno.EEXIST, () -> fs.mknod(R, "r", 0644, 0, ROOT));
    errno(Errno.ENOTDIR, () -> fs.mknod(fs.lookup(R, "r", ROOT).ino(), "x", 0644, 0, ROOT));
  }

  @Test
  void symlinks() throws Exception {
    Attr l = fs.symlink(R, "l", "some/where", ALICE);
    assertTrue(l.isSymlink());
    assertEquals(10, l.size());
    assertEquals("some/where", fs.readlink(l.ino()));
    errno(Errno.EINVAL, () -> fs.readlink(R));
  }

  @Test
  void hardLinks() throws Exception {
    Attr f = fs.mknod(R, "f", 0644, 0, ROOT);
    Attr d = fs.mkdir(R, "d", 0755, ROOT);
    assertEquals(2, fs.link(f.ino(), d.ino(), "g", ROOT).nlink());
    errno(Errno.EPERM, () -> fs.link(d.ino(), R, "d2", ROOT));
    errno(Errno.EEXIST, () -> fs.link(f.ino(), R, "d", ROOT));
    fs.unlink(R, "f", ROOT);
    assertEquals(1, fs.getattr(f.ino()).nlink());
    fs.unlink(d.ino(), "g", ROOT);
    errno(Errno.ENOENT, () -> fs.getattr(f.ino()));
    errno(Errno.EISDIR, () -> fs.unlink(R, "d", ROOT));
    errno(Errno.ENOENT, () -> fs.rmdir(R, "nothing-dir", ROOT));
  }

  @Test
  void rmdirOfAFileIsEnotdir() throws Exception {
    fs.mknod(R, "f", 0644, 0, ROOT);
    errno(Errno.ENOTDIR, () -> fs.rmdir(R, "f", ROOT));
    errno(Errno.ENOENT, () -> fs.unlink(R, "nope", ROOT));
  }

  @Test
  void renameReplacesAndKeepsLinkCounts() throws Exception {
    Attr a = fs.mkdir(R, "a", 0755, ROOT);
    Attr b = fs.mkdir(R, "b", 0755, ROOT);
    Attr f = fs.mknod(a.ino(), "f", 0644, 0, ROOT);
    Attr g = fs.mknod(b.ino(), "g", 0644, 0, ROOT);
    fs.rename(a.ino(), "f", b.ino(), "g", ROOT);
    assertEquals(f.ino(), fs.lookup(b.ino(), "g", ROOT).ino());
    errno(Errno.ENOENT, () -> fs.getattr(g.ino()));
    errno(Errno.ENOENT, () -> fs.lookup(a.ino(), "f", ROOT));
    Attr sub = fs.mkdir(a.ino(), "sub", 0755, ROOT);
    fs.rename(a.ino(), "sub", b.ino(), "sub", ROOT);
    assertEquals(2, fs.getattr(a.ino()).nlink());
    assertEquals(3, fs.getattr(b.ino()).nlink());
    assertEquals(b.ino(), fs.lookup(sub.ino(), "..", ROOT).ino());
    fs.mkdir(R, "empty", 0755, ROOT);
    fs.rename(R, "a", R, "empty", ROOT);
    assertEquals(a.ino(), fs.lookup(R, "empty", ROOT).ino());
    assertEquals(4, fs.getattr(R).nlink());
  }

  @Test
  void renameErrors() throws Exception {
    Attr a = fs.mkdir(R, "a", 0755, ROOT);
    Attr sub = fs.mkdir(a.ino(), "sub", 0755, ROOT);
    fs.mknod(a.ino(), "f", 0644, 0, ROOT);
    fs.mkdir(R, "full", 0755, ROOT);
    fs.mknod(fs.lookup(R, "full", ROOT).ino(), "x", 0644, 0, ROOT);
    errno(Errno.EINVAL, () -> fs.rename(R, "a", sub.ino(), "a", ROOT));
    errno(Errno.EINVAL, () -> fs.rename(R, "a", a.ino(), "a", ROOT));
    errno(Errno.ENOTEMPTY, () -> fs.rename(a.ino(), "sub", R, "full", ROOT));
    errno(Errno.ENOTDIR, () -> fs.rename(R, "full", a.ino(), "f", ROOT));
    errno(Errno.EISDIR, () -> fs.rename(a.ino(), "f", a.ino(), "sub", ROOT));
    errno(Errno.ENOENT, () -> fs.rename(R, "nope", R, "x", ROOT));
    fs.rename(a.ino(), "f", a.ino(), "f", ROOT);
    assertTrue(fs.lookup(a.ino(), "f", ROOT).isRegular());
  }

  @Test
  void stickyDirectories() throws Exception {
    Attr tmp = fs.mkdir(R, "tmp", 01777, ROOT);
    fs.mknod(tmp.ino(), "alices", 0644, 0, ALICE);
    errno(Errno.EPERM, () -> fs.unlink(tmp.ino(), "alices", BOB));
    errno(Errno.EPERM, () -> fs.rename(tmp.ino(), "alices", tmp.ino(), "b", BOB));
    fs.rename(tmp.ino(), "alices", tmp.ino(), "mine", ALICE);
    fs.unlink(tmp.ino(), "mine", ALICE);
  }

  @Test
  void setgidDirectoriesHandDownTheirGroup() throws Exception {
    Attr d = fs.mkdir(R, "shared", 02775, ROOT);
    fs.setattr(d.ino(), SetAttr.owner(null, 50), ROOT);
    Attr f = fs.mknod(d.ino(), "f", 0644, 0, ALICE);
    assertEquals(50, f.gid());
    Attr sub = fs.mkdir(d.ino(), "sub", 0755, ALICE);
    assertEquals(50, sub.gid());
    assertEquals(Attr.S_ISGID, sub.mode() & Attr.S_ISGID);
  }

  @Test
  void setattr() throws Exception {
    Attr f = fs.mknod(R, "f", 0644, 0, ALICE);
    Attr m = fs.setattr(f.ino(), SetAttr.mode(0600 | Attr.S_IFDIR), ALICE);
    assertEquals(Attr.S_IFREG | 0600, m.mode());
    errno(Errno.EPERM, () -> fs.setattr(f.ino(), SetAttr.mode(0777), BOB));
    errno(Errno.EPERM, () -> fs.setattr(f.ino(), SetAttr.owner(1001, null), ALICE));
    assertEquals(1001, fs.setattr(f.ino(), SetAttr.owner(1001, 7), ROOT).uid());
    Attr t = fs.setattr(f.ino(), SetAttr.times(5L, 7L), ROOT);
    assertEquals(5L, t.atimeNs());
    assertEquals(7L, t.mtimeNs());
    assertTrue(t.ctimeNs() > 7L);
    Attr now = fs.setattr(f.ino(), SetAttr.times(SetAttr.NOW, SetAttr.NOW), ROOT);
    assertTrue(now.mtimeNs() > 7L);
    Attr d = fs.mkdir(R, "d", 0755, ROOT);
    fs.mknod(d.ino(), "x", 0644, 0, ROOT);
    assertEquals(1L, fs.setattr(d.ino(), SetAttr.times(1L, 1L), ROOT).mtimeNs());
    assertEquals(1L, fs.getattr(d.ino()).mtimeNs());
    errno(Errno.EISDIR, () -> fs.setattr(d.ino(), SetAttr.size(0), ROOT));
  }

  @Test
  void entryChangesMoveDirectoryTimes() throws Exception {
    Attr d = fs.mkdir(R, "d", 0755, ROOT);
    fs.setattr(d.ino(), SetAttr.times(1L, 1L), ROOT);
    fs.mknod(d.ino(), "x", 0644, 0, ROOT);
    assertTrue(fs.getattr(d.ino()).mtimeNs() > 1L);
  }

  /**
   * A directory listed once is listed again without a read, and shows this node's own creates
   * and unlinks at once (their commits wait for the watch, whose events drop the listing).
   */
  @Test
  void aListedDirectoryIsListedAgainFromTheCacheAndShowsOwnChangesAtOnce() throws Exception {
    Attr d = fs.mkdir(R, "listed", 0755, ROOT);
    for (int i = 0; i < 50; i++) {
      fs.mknod(d.ino(), "f" + i, 0644, 0, ROOT);
    }
    assertEquals(50, fs.readdir(d.ino(), 0, 1000).entries().size());
    long reads = fs.stats().storeRanges() + fs.stats().storeGets();
    DirPage again = fs.readdir(d.ino(), 0, 1000);
    assertEquals(50, again.entries().size());
    assertEquals(reads, fs.stats().storeRanges() + fs.stats().storeGets(), "reads to list again");
    fs.mknod(d.ino(), "new", 0644, 0, ROOT);
    fs.unlink(d.ino(), "f0", ROOT);
    Set<String> names = new HashSet<>();
    fs.readdir(d.ino(), 0, 1000).entries().forEach(e -> names.add(e.name()));
    assertTrue(names.contains("new") && !names.contains("f0"), names.toString());
    assertEquals(50, names.size());
  }

  /** Pages of a cached listing are cut as paged reads cut them: never inside one hash. */
  @Test
  void aCachedListingIsNeverCutBetweenEntriesOfOneHash() {
    List<DirEntry> all = List.of(new DirEntry("a", 10, 8, 5), new DirEntry("b", 11, 8, 7),
        new DirEntry("c", 12, 8, 7), new DirEntry("d", 13, 8, 7), new DirEntry("e", 14, 8, -3));
    DirPage p1 = DirReader.page(all, 0, 2);
    assertEquals(List.of("a"), p1.entries().stream().map(DirEntry::name).toList());
    assertTrue(p1.more());
    DirPage p2 = DirReader.page(all, 5, 2); // one hash fills the page: all of it comes at once
    assertEquals(List.of("b", "c", "d"), p2.entries().stream().map(DirEntry::name).toList());
    assertTrue(p2.more());
    DirPage p3 = DirReader.page(all, 7, 2); // hashes compare unsigned: -3 is the largest
    assertEquals(List.of("e"), p3.entries().stream().map(DirEntry::name).toList());
    assertFalse(p3.more());
  }

  /** 300 entries: listed from the cached listing; 1,100: in pages of range reads. */
  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.ValueSource(ints = {300, DirReader.LISTING_LIMIT + 100})
  void readdirPagesWithStableCookies(int size) throws Exception {
    Attr d = fs.mkdir(R, "big", 0755, ROOT);
    Set<String> made = new HashSet<>();
    for (int i = 0; i < size; i++) {
      fs.mknod(d.ino(), "f" + i, 0644, 0, ROOT);
      made.add("f" + i);
    }
    Set<String> seen = new HashSet<>();
    long cookie = 0;
    int pages = 0;
    boolean more = true;
    while (more) {
      DirPage page = fs.readdir(d.ino(), cookie, 7);
      assertTrue(page.entries().size() <= 7);
      for (DirEntry e : page.entries()) {
        assertTrue(seen.add(e.name()), "repeated " + e.name());
        assertTrue(e.cookie() > cookie);
        cookie = e.cookie();
      }
      if (pages++ == 3) {
        fs.unlink(d.ino(), page.entries().get(0).name(), ROOT); // already listed: no effect
        made.remove(page.entries().get(0).name());
        seen.remove(page.entries().get(0).name());
      }
      more = page.more();
    }
    assertEquals(made, seen);
    errno(Errno.ENOTDIR, () -> fs.readdir(fs.mknod(R, "f", 0644, 0, ROOT).ino(), 0, 10));
  }

  @Test
  void xattrs() throws Exception {
    Attr f = fs.mknod(R, "f", 0644, 0, ALICE);
    long ino = f.ino();
    errno(Errno.ENODATA, () -> fs.getxattr(ino, "security.capability"));
    fs.setxattr(ino, "user.a", new byte[] {1, 2}, 0, ALICE);
    assertArrayEquals(new byte[] {1, 2}, fs.getxattr(ino, "user.a"));
    errno(Errno.EEXIST, () -> fs.setxattr(ino, "user.a", new byte[] {3}, 1, ALICE));
    errno(Errno.ENODATA, () -> fs.setxattr(ino, "user.b", new byte[] {3}, 2, ALICE));
    fs.setxattr(ino, "user.a", new byte[] {3}, 2, ALICE);
    assertArrayEquals(new byte[] {3}, fs.getxattr(ino, "user.a"));
    fs.setxattr(ino, "trusted.t", new byte[0], 0, ROOT);
    errno(Errno.EPERM, () -> fs.setxattr(ino, "trusted.u", new byte[0], 0, ALICE));
    fs.setxattr(ino, "security.selinux", new byte[] {9}, 0, ROOT);
    errno(Errno.EOPNOTSUPP, () -> fs.setxattr(ino, "system.posix_acl_access", new byte[0], 0, ROOT));
    errno(Errno.EOPNOTSUPP, () -> fs.getxattr(ino, "other.x"));
    assertEquals(List.of("security.selinux", "trusted.t", "user.a"), fs.listxattr(ino));
    fs.removexattr(ino, "user.a", ALICE);
    errno(Errno.ENODATA, () -> fs.removexattr(ino, "user.a", ALICE));
    errno(Errno.ENODATA, () -> fs.getxattr(ino, "user.a"));
    fs.unlink(R, "f", ROOT);
    assertTrue(fx.store.prefix(fx.keys.xattrPrefix(ino), 0).kvs().isEmpty());
  }

  @Test
  void inodeNumbersComeInBatches() throws Exception {
    List<Long> inos = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      inos.add(fs.mknod(R, "f" + i, 0644, 0, ROOT).ino());
    }
    assertEquals(List.of(2L, 3L, 4L, 5L, 6L), inos);
    assertEquals("1026", fx.store.get(fx.keys.inoNext()).orElseThrow().valueString());
  }

  @Test
  void statfsComesFromTheAllocator() throws Exception {
    var s = fs.statfs();
    assertEquals(4096, s.blockSize());
    assertEquals(fx.allocator.totalBlocks(), s.totalBlocks());
    assertEquals(fx.allocator.freeBlocks(), s.freeBlocks());
    assertEquals(255, s.maxNameLength());
    assertEquals(0, s.totalInodes(), "no inode table: nothing to count, as btrfs reports");
    assertEquals(0, s.freeInodes());
  }
}

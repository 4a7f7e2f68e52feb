package io.etcfs.core.fs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.spi.vfs.Attr;
import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.Vfs;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class InodePathsTest {
  static final Caller ROOT = Caller.ROOT;
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

  @Test
  void rootIsSlashAndUnknownInodesHaveNoPath() {
    assertEquals(Optional.of("/"), fs.pathOf(R));
    assertEquals(Optional.empty(), fs.pathOf(987_654_321L));
    assertEquals(Optional.empty(), fs.pathOf(0));
    assertEquals(Optional.empty(), fs.pathOf(-1));
  }

  @Test
  void createdInodesHaveTheirPaths() throws Exception {
    Attr a = fs.mkdir(R, "a", 0755, ROOT);
    Attr b = fs.mkdir(a.ino(), "b", 0755, ROOT);
    Attr f = fs.mknod(b.ino(), "f", 0644, 0, ROOT);
    Attr s = fs.symlink(a.ino(), "s", "b/f", ROOT);
    long g = fs.create(R, "g", 0644, 0, ROOT).ino();
    assertEquals(Optional.of("/a"), fs.pathOf(a.ino()));
    assertEquals(Optional.of("/a/b"), fs.pathOf(b.ino()));
    assertEquals(Optional.of("/a/b/f"), fs.pathOf(f.ino()));
    assertEquals(Optional.of("/a/s"), fs.pathOf(s.ino()));
    assertEquals(Optional.of("/g"), fs.pathOf(g));
  }

  @Test
  void anotherNodeNamesDirectoriesByTheirParentAndFilesOnceLookedUp() throws Exception {
    Attr a = fs.mkdir(R, "a", 0755, ROOT);
    Attr b = fs.mkdir(a.ino(), "b", 0755, ROOT);
    Attr f = fs.mknod(b.ino(), "f", 0644, 0, ROOT);
    try (EtcFs other = fx.node("n2").fs) {
      assertEquals(Optional.of("/a/b"), other.pathOf(b.ino()));
      assertEquals(Optional.empty(), other.pathOf(f.ino()), "a file it never saw a name of");
      assertEquals(f.ino(), other.resolve("/a/b/f", ROOT).ino());
      assertEquals(Optional.of("/a/b/f"), other.pathOf(f.ino()));
    }
  }

  @Test
  void aDirectoryIsFoundAmongManyEntriesOfItsParentPageByPage() throws Exception {
    Attr big = fs.mkdir(R, "big", 0755, ROOT);
    for (int i = 0; i < 1500; i++) {
      fs.mknod(big.ino(), "f" + i, 0644, 0, ROOT);
    }
    Attr sub = fs.mkdir(big.ino(), "sub", 0755, ROOT);
    assertTrue(fs.readdir(big.ino(), 0, 512).entries().stream()
        .noneMatch(e -> e.ino() == sub.ino()), "sub lies past the first page of the search");
    try (EtcFs other = fx.node("n2").fs) {
      assertEquals(Optional.of("/big/sub"), other.pathOf(sub.ino()));
    }
  }

  @Test
  void renamesMoveThePathAndAMovedDirectoryCarriesItsFiles() throws Exception {
    Attr a = fs.mkdir(R, "a", 0755, ROOT);
    Attr b = fs.mkdir(R, "b", 0755, ROOT);
    Attr f = fs.mknod(a.ino(), "f", 0644, 0, ROOT);
    fs.rename(a.ino(), "f", b.ino(), "g", ROOT);
    assertEquals(Optional.of("/b/g"), fs.pathOf(f.ino()));
    fs.rename(R, "b", a.ino(), "c", ROOT);
    assertEquals(Optional.of("/a/c"), fs.pathOf(b.ino()));
    assertEquals(Optional.of("/a/c/g"), fs.pathOf(f.ino()));
    try (EtcFs other = fx.node("n2").fs) {
      assertEquals(Optional.of("/a/c"), other.pathOf(b.ino()), "found by its parent");
    }
  }

  @Test
  void aNameThatNoLongerHoldsGivesNoPath() throws Exception {
    Attr f = fs.mknod(R, "f", 0644, 0, ROOT);
    Attr x = fs.mknod(R, "x", 0644, 0, ROOT);
    fs.rename(R, "x", R, "f", ROOT); // x replaces f: f's inode has no name any more
    assertEquals(Optional.empty(), fs.pathOf(f.ino()));
    assertEquals(Optional.of("/f"), fs.pathOf(x.ino()));
    fs.unlink(R, "f", ROOT);
    assertEquals(Optional.empty(), fs.pathOf(x.ino()));
    Attr d = fs.mkdir(R, "d", 0755, ROOT);
    fs.rmdir(R, "d", ROOT);
    assertEquals(Optional.empty(), fs.pathOf(d.ino()));
  }

  @Test
  void aHardLinkIsNamedByTheLastNameSeenUntilThatNameGoes() throws Exception {
    Attr d = fs.mkdir(R, "d", 0755, ROOT);
    Attr f = fs.mknod(R, "f", 0644, 0, ROOT);
    fs.link(f.ino(), d.ino(), "h", ROOT);
    assertEquals(Optional.of("/d/h"), fs.pathOf(f.ino()));
    fs.lookup(R, "f", ROOT);
    assertEquals(Optional.of("/f"), fs.pathOf(f.ino()));
    fs.unlink(R, "f", ROOT);
    assertEquals(Optional.empty(), fs.pathOf(f.ino()), "the other name was not the last seen");
    fs.lookup(d.ino(), "h", ROOT);
    assertEquals(Optional.of("/d/h"), fs.pathOf(f.ino()));
  }

  @Test
  void theNameMapKeepsTheMostRecentlyUsedInodes() {
    LastNames names = new LastNames(2);
    names.remember(10, R, "a");
    names.remember(11, R, "b");
    names.get(10);
    names.remember(12, R, "c");
    names.remember(12, R, "..");
    assertEquals(2, names.size());
    assertEquals(new LastNames.Link(R, "a"), names.get(10));
    assertNull(names.get(11));
    assertEquals(new LastNames.Link(R, "c"), names.get(12));
  }
}

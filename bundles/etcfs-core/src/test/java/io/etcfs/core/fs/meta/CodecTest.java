package io.etcfs.core.fs.meta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 10, unit = TimeUnit.SECONDS)
class CodecTest {
  static final Inode FILE = new Inode(42, 0100644, 7, 8, 1, 12345, 0, 4, 0, 1, 2, 3, null);
  static final Inode LINK = new Inode(43, 0120777, 0, 0, 1, 3, 0, 0, 0, 1, 2, 3, "é/b");

  @Test
  void inodesRoundTrip() {
    assertEquals(FILE, Codec.decodeInode(Codec.inode(FILE)));
    assertEquals(LINK, Codec.decodeInode(Codec.inode(LINK)));
    assertEquals(Inode.root(5), Codec.decodeInode(Codec.inode(Inode.root(5))));
  }

  @Test
  void smallRecordsRoundTrip() {
    var d = new Codec.Dirent(9, 0040000);
    assertEquals(d, Codec.decodeDirent(Codec.dirent(d)));
    var t = new Codec.DirTimes(5, 6);
    assertEquals(t, Codec.decodeDirTimes(Codec.dirTimes(t)));
    var ex = List.of(new FileExtent(0, 300, 2), new FileExtent(5, 100, 1));
    assertEquals(ex, Codec.decodeExtents(Codec.extents(ex)));
  }

  @Test
  void corruptInputIsAClearError() {
    byte[] good = Codec.inode(LINK);
    assertMessage("corrupt inode", () -> Codec.decodeInode(Arrays.copyOf(good, good.length - 1)));
    assertMessage("truncated", () -> Codec.decodeInode(Arrays.copyOf(good, 20)));
    assertMessage("trailing", () -> Codec.decodeInode(Arrays.copyOf(good, good.length + 1)));
    byte[] v2 = good.clone();
    v2[0] = 2;
    assertMessage("unknown version 2", () -> Codec.decodeInode(v2));
    assertMessage("empty", () -> Codec.decodeDirent(new byte[0]));
    byte[] overlap = Codec.extents(List.of(new FileExtent(0, 1, 4), new FileExtent(9, 1, 4)));
    overlap[3 + 24 + 7] = 2; // second extent now starts at block 2, inside the first
    assertMessage("overlap", () -> Codec.decodeExtents(overlap));
    assertThrows(IllegalArgumentException.class, () -> Codec.extents(List.of()));
  }

  @Test
  void nameHashIsNeverZeroAndSpreads() {
    assertTrue(NameHash.of("") >= io.etcfs.spi.vfs.DirEntry.FIRST_COOKIE);
    assertTrue(NameHash.of("a") != NameHash.of("b"));
    assertTrue(NameHash.of("x") >= 0);
  }

  private static void assertMessage(String part, org.junit.jupiter.api.function.Executable e) {
    IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, e);
    assertTrue(ex.getMessage().contains(part), ex.getMessage());
  }
}

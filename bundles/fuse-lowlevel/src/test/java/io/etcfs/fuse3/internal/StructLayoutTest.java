package io.etcfs.fuse3.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.etcfs.spi.vfs.Attr;
import java.nio.charset.StandardCharsets;
import jnr.ffi.LibraryLoader;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Checks the directory entries {@link DirBuffer} lays out against what the installed libfuse 3
 * makes of the same entry with fuse_add_direntry[_plus] from the structures {@link Mem} writes,
 * byte for byte. The module's tests run with jnr-ffi's generated stubs off (pom.xml): those
 * pass the sixth argument of these functions wrongly, which is why DirBuffer exists.
 */
@Timeout(30)
class StructLayoutTest {
  /** libfuse's own layout functions. */
  public interface Direntries {
    long fuse_add_direntry(long req, long buf, long bufsize, long name, long stat, long off);

    long fuse_add_direntry_plus(long req, long buf, long bufsize, long name, long entry,
        long off);
  }

  private static Direntries libfuse;
  private static final CacheSettings CACHE = new CacheSettings(2.5, 0, 0, 1.25, true, true);
  private static final Attr DIR = new Attr(77, Attr.S_IFDIR | 0755, 2, 1000, 100, 0x0801, 4096,
      8, 1_500_000_123L, -2_000_000_456L, 3_000_000_789L);

  @BeforeAll
  static void load() {
    Libfuse3Probe.load();
    libfuse = LibraryLoader.create(Direntries.class).failImmediately().load(Libfuse3.SONAME);
  }

  @Test
  void aDirectoryEntryIsLaidOutAsLibfuseLaysItOut() {
    long st = Mem.alloc(Mem.STAT_SIZE);
    Mem.putTypeOnly(st, 4242, Attr.S_IFREG | 0644);
    byte[] ours = ours(false, "hello.txt", 4242, new Attr(4242, Attr.S_IFREG, -1, 0, 0, 0, 0, 0,
        0, 0, 0), false, 0x1234_5678_9abcL);
    byte[] theirs = theirs(false, "hello.txt", st, 0x1234_5678_9abcL);
    assertEquals(40, theirs.length); // 24 + 9 name bytes, padded to 8
    assertArrayEquals(theirs, ours);
  }

  @Test
  void aPlusEntryIsLaidOutAsLibfuseLaysItOut() {
    long e = Mem.alloc(Mem.ENTRY_SIZE);
    Mem.putEntry(e, 77, DIR, CACHE.dirAttrSeconds(), CACHE.entrySeconds());
    byte[] theirs = theirs(true, "sub", e, 99);
    assertEquals(128 + 32, theirs.length);
    assertArrayEquals(theirs, ours(true, "sub", 77, DIR, true, 99));
  }

  @Test
  void aPlusEntryWithoutAttributesCarriesNodeIdZero() {
    long e = Mem.alloc(Mem.ENTRY_SIZE);
    Mem.clear(e, Mem.ENTRY_SIZE);
    Mem.putTypeOnly(e + Mem.ENTRY_ATTR, 1, Attr.S_IFDIR);
    assertArrayEquals(theirs(true, "..", e, 2),
        ours(true, "..", 1, new Attr(1, Attr.S_IFDIR, -1, 0, 0, 0, 0, 0, 0, 0, 0), false, 2));
  }

  @Test
  void anEntryThatDoesNotFitIsNotAdded() {
    long buf = Mem.alloc(64);
    DirBuffer out = new DirBuffer(buf, 64, false, CACHE);
    Attr file = new Attr(5, Attr.S_IFREG, 1, 0, 0, 0, 0, 0, 0, 0, 0);
    assertEquals(true, out.add("a-name-of-twenty-bytes", 5, file, false, 0, 3)); // 48 bytes
    assertFalse(out.add("b", 6, file, false, 0, 4)); // 32 more do not fit in 16
    assertEquals(48, out.used());
  }

  private static byte[] ours(boolean plus, String name, long ino, Attr attr, boolean withEntry,
      long next) {
    long buf = Mem.alloc(4096);
    DirBuffer out = new DirBuffer(buf, 4096, plus, CACHE);
    out.add(name, ino, attr, withEntry,
        attr.isRegular() ? 0 : CACHE.dirAttrSeconds(), next);
    return Mem.bytes(buf, out.used());
  }

  private static byte[] theirs(boolean plus, String name, long struct, long next) {
    long buf = Mem.alloc(4096);
    Mem.clear(buf, 4096);
    long namePtr = Mem.alloc(300);
    Mem.putString(namePtr, name.getBytes(StandardCharsets.UTF_8));
    long need = plus
        ? libfuse.fuse_add_direntry_plus(0, buf, 4096, namePtr, struct, next)
        : libfuse.fuse_add_direntry(0, buf, 4096, namePtr, struct, next);
    return Mem.bytes(buf, need);
  }
}

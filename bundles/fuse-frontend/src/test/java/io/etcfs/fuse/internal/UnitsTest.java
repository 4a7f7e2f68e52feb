package io.etcfs.fuse.internal;

import io.etcfs.fuse.common.MountInfo;
import io.etcfs.fuse.common.Guard;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.Vfs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import jnr.ffi.Memory;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The small parts: xattr size protocol, the guard, paths, mountinfo, the option line. */
@Timeout(30)
class UnitsTest {
  private static final Runtime RUNTIME = Runtime.getSystemRuntime();

  @Test
  void xattrSizeQueryAndErange() throws Exception {
    MemoryVfs vfs = new MemoryVfs();
    vfs.setxattr(Vfs.ROOT, "user.a", "12345".getBytes(), 0, Caller.ROOT);
    XattrCalls xattrs = new XattrCalls(vfs);
    Pointer buf = Memory.allocateDirect(RUNTIME, 64);
    assertEquals(5, xattrs.get(Vfs.ROOT, "user.a", buf, 0), "size 0 asks for the size");
    FsException e =
        assertThrows(FsException.class, () -> xattrs.get(Vfs.ROOT, "user.a", buf, 4));
    assertEquals(Errno.ERANGE, e.errno());
    assertEquals(5, xattrs.get(Vfs.ROOT, "user.a", buf, 5));
    byte[] back = new byte[5];
    buf.get(0, back, 0, 5);
    assertArrayEquals("12345".getBytes(), back);
    assertEquals(7, xattrs.list(Vfs.ROOT, buf, 0), "\"user.a\\0\"");
    assertEquals(Errno.ERANGE,
        assertThrows(FsException.class, () -> xattrs.list(Vfs.ROOT, buf, 6)).errno());
    assertEquals(Errno.ENODATA,
        assertThrows(FsException.class, () -> xattrs.get(Vfs.ROOT, "user.b", buf, 64)).errno());
  }

  @Test
  void guardNeverAnswersSuccessForAFailure() {
    Guard guard = new Guard();
    assertEquals(-Errno.ENOSPC, guard.run("t", "/", () -> {
      throw new FsException(Errno.ENOSPC, "full");
    }));
    assertEquals(-Errno.EIO, guard.run("t", "/", () -> {
      throw new FsException(-3, "bad errno");
    }));
    assertEquals(-Errno.EIO, guard.run("t", "/", () -> {
      throw new IllegalStateException("bug");
    }));
    assertEquals(-Errno.EIO, guard.run("t", "/", () -> {
      throw new OutOfMemoryError("test");
    }));
    assertEquals(42, guard.run("t", "/", () -> 42));
    guard.close();
    assertEquals(-Errno.EIO, guard.run("t", "/", () -> 0), "after unmount");
  }

  @Test
  void pathsSplit() throws Exception {
    assertEquals("/", Paths.parent("/a"));
    assertEquals("a", Paths.name("/a"));
    assertEquals("/a/b", Paths.parent("/a/b/c"));
    assertEquals("c", Paths.name("/a/b/c"));
    assertEquals(Errno.EINVAL, assertThrows(FsException.class, () -> Paths.name("/")).errno());
    assertEquals(Errno.EINVAL, assertThrows(FsException.class, () -> Paths.parent(null)).errno());
  }

  @Test
  void mountinfoLinesAndEscapes(@TempDir Path tmp) throws Exception {
    Path table = tmp.resolve("mountinfo");
    Files.writeString(table, String.join("\n",
        "22 27 0:21 / /proc rw,relatime - proc proc rw",
        "90 27 0:52 / /mnt/with\\040space rw,nosuid,nodev,relatime shared:1 - fuse.etcfs "
            + "etcfs:fs1 rw,user_id=0,group_id=0,default_permissions,allow_other",
        "91 90 0:53 / /mnt/with\\040space rw - fuse.other x rw",
        "garbage"));
    MountInfo top = MountInfo.at(table, Path.of("/mnt/with space")).orElseThrow();
    assertEquals(new MountInfo("0:53", "/mnt/with space", "fuse.other", "x"), top);
    assertEquals("0:21", MountInfo.at(table, Path.of("/proc")).orElseThrow().device());
    assertTrue(MountInfo.at(table, Path.of("/mnt")).isEmpty());
    assertEquals("a\\b", MountInfo.unescape("a\\134b"));
    assertEquals("a\\9", MountInfo.unescape("a\\9"));
  }

  @Test
  void optionLineHasEveryMeasuredOption() {
    MountOptions options = new MountOptions("a,b\\c", Path.of("/m"), true, 0, 1.5,
        Duration.ofSeconds(1), Duration.ofSeconds(1));
    List<String> args = options.arguments();
    assertEquals(List.of("-f", "-s", "-o"), args.subList(0, 3));
    assertEquals(List.of("fsname=etcfs:a\\,b\\\\c", "subtype=etcfs", "big_writes",
        "max_write=131072", "default_permissions", "allow_other", "use_ino", "auto_unmount",
        "atomic_o_trunc", "attr_timeout=0.0", "entry_timeout=1.5",
        "negative_timeout=1.5"), List.of(args.get(3).split("(?<!\\\\),")));
  }
}

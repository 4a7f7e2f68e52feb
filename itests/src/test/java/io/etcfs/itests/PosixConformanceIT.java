package io.etcfs.itests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * POSIX on a real etcfs mount (one node from the tarball, real etcd, real FUSE), operation by
 * operation and errno by errno, through the tools and system calls a user would use.
 */
@Timeout(300)
class PosixConformanceIT {
  @TempDir static Path tmp;
  static LocalCluster cluster;
  Path d;

  @BeforeAll
  static void up() throws Exception {
    cluster = LocalCluster.up(tmp, 1, "2G");
    // JUnit makes its temporary directory owner-only; other users must reach the mount.
    for (Path p = cluster.mount(1).getParent(); p.startsWith(tmp); p = p.getParent()) {
      Files.setPosixFilePermissions(p, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
    }
  }

  @AfterAll
  static void down() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  @BeforeEach
  void dir(TestInfo info) throws IOException {
    d = Files.createDirectory(cluster.mount(1).resolve(info.getTestMethod().orElseThrow().getName()));
    Files.setPosixFilePermissions(d, java.nio.file.attribute.PosixFilePermissions.fromString("rwxrwxrwx"));
  }

  @Test
  void theMountIsEtcfs() throws Exception {
    String mounts = Files.readString(Path.of("/proc/self/mountinfo"));
    assertTrue(mounts.contains(" " + cluster.mount(1) + " ") && mounts.contains("fuse.etcfs"),
        mounts);
  }

  @Test
  void writeReadAppendTruncateExcl() throws Exception {
    Path f = d.resolve("f");
    Files.writeString(f, "hello");
    assertEquals("hello", Files.readString(f));
    Files.writeString(f, " world", StandardOpenOption.APPEND);
    assertEquals("hello world", Files.readString(f));
    Files.writeString(f, "x", StandardOpenOption.TRUNCATE_EXISTING);
    assertEquals("x", Files.readString(f));
    assertThrows(FileAlreadyExistsException.class,
        () -> Files.writeString(f, "y", StandardOpenOption.CREATE_NEW));
    assertThrows(NoSuchFileException.class, () -> Files.readString(d.resolve("missing")));
  }

  @Test
  void largeFileRoundTripsAcrossManyExtents() throws Exception {
    Path f = d.resolve("big");
    byte[] chunk = new byte[1 << 20];
    new Random(7).nextBytes(chunk);
    try (FileChannel ch = FileChannel.open(f, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
      for (int i = 0; i < 64; i++) {
        chunk[0] = (byte) i;
        ch.write(ByteBuffer.wrap(chunk));
      }
      ch.force(true);
    }
    assertEquals(64L << 20, Files.size(f));
    try (FileChannel ch = FileChannel.open(f)) {
      ByteBuffer b = ByteBuffer.allocate(1 << 20);
      for (int i = 0; i < 64; i++) {
        b.clear();
        while (b.hasRemaining() && ch.read(b) > 0) { }
        chunk[0] = (byte) i;
        assertArrayEquals(chunk, b.array(), "MiB " + i);
      }
    }
    long blocks = Long.parseLong(Sh.run("stat", "-c", "%b", f.toString()).ok().out().strip());
    assertEquals(64L * 2048, blocks, "st_blocks in 512-byte units");
  }

  @Test
  void holesAndTruncatedTailsReadAsZeros() throws Exception {
    Path f = d.resolve("sparse");
    try (FileChannel ch = FileChannel.open(f, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
      ch.write(ByteBuffer.wrap("end".getBytes()), 10 << 20);
    }
    byte[] all = Files.readAllBytes(f);
    assertEquals((10 << 20) + 3, all.length);
    for (int i = 0; i < 10 << 20; i++) {
      if (all[i] != 0) {
        throw new AssertionError("byte " + i + " of a hole is " + all[i]);
      }
    }
    Path g = d.resolve("tail");
    byte[] ones = new byte[8192];
    java.util.Arrays.fill(ones, (byte) 1);
    Files.write(g, ones);
    Sh.run("truncate", "-s", "100", g.toString()).ok();
    Sh.run("truncate", "-s", "8192", g.toString()).ok();
    byte[] back = Files.readAllBytes(g);
    for (int i = 100; i < 8192; i++) {
      assertEquals(0, back[i], "stale byte at " + i + " after truncate down and up");
    }
  }

  @Test
  void mkdirRmdirUnlinkErrors() throws Exception {
    Path a = Files.createDirectory(d.resolve("a"));
    Files.writeString(a.resolve("f"), "x");
    assertThrows(DirectoryNotEmptyException.class, () -> Files.delete(a));
    Sh.run("rmdir", a.resolve("f").toString()).fails("Not a directory");
    Sh.run("unlink", a.toString()).fails("Is a directory");
    Sh.run("mkdir", a.toString()).fails("File exists");
    Sh.run("mkdir", d.resolve("no/such").toString()).fails("No such file or directory");
    Files.delete(a.resolve("f"));
    Files.delete(a);
    assertFalse(Files.exists(a));
  }

  @Test
  void directoryLinkCounts() throws Exception {
    Path a = Files.createDirectory(d.resolve("a"));
    assertEquals("2", stat("%h", a));
    Files.createDirectory(a.resolve("b"));
    Files.createDirectory(a.resolve("c"));
    Files.writeString(a.resolve("f"), "");
    assertEquals("4", stat("%h", a));
    Files.delete(a.resolve("c"));
    assertEquals("3", stat("%h", a));
  }

  @Test
  void renameReplacesAtomicallyAndRefusesWhatPosixRefuses() throws Exception {
    Path x = Files.writeString(d.resolve("x"), "new");
    Path y = Files.writeString(d.resolve("y"), "old");
    Sh.run("mv", "-T", x.toString(), y.toString()).ok();
    assertEquals("new", Files.readString(y));
    assertFalse(Files.exists(x));

    Path sub = Files.createDirectories(d.resolve("p/q"));
    Path other = Files.createDirectory(d.resolve("other"));
    // rename(2) itself, not mv, which refuses this case before asking the filesystem.
    java.nio.file.FileSystemException into = assertThrows(java.nio.file.FileSystemException.class,
        () -> Files.move(d.resolve("p"), sub.resolve("inside"),
            java.nio.file.StandardCopyOption.ATOMIC_MOVE));
    assertEquals("Invalid argument", into.getReason());
    Path empty = Files.createDirectory(d.resolve("empty"));
    assertEquals("ok", rename(other, empty));
    assertTrue(Files.isDirectory(empty));
    Path full = Files.createDirectory(d.resolve("full"));
    Files.writeString(full.resolve("k"), "");
    assertEquals("Directory not empty", rename(empty, full));
    assertEquals("Is a directory", rename(y, full));
    assertEquals("Not a directory", rename(full, y));
    Sh.run("mv", y.toString(), sub.resolve("moved").toString()).ok();
    assertEquals("new", Files.readString(sub.resolve("moved")));
  }

  @Test
  void hardLinksShareTheInode() throws Exception {
    Path f = Files.writeString(d.resolve("f"), "data");
    Sh.run("ln", f.toString(), d.resolve("g").toString()).ok();
    assertEquals(stat("%i", f), stat("%i", d.resolve("g")));
    assertEquals("2", stat("%h", f));
    Files.delete(f);
    assertEquals("data", Files.readString(d.resolve("g")));
    assertEquals("1", stat("%h", d.resolve("g")));
    Path dir = Files.createDirectory(d.resolve("dir"));
    Sh.run("ln", dir.toString(), d.resolve("dirlink").toString()).fails("hard link not allowed");
  }

  @Test
  void symlinks() throws Exception {
    Files.writeString(d.resolve("target"), "t");
    Path l = Files.createSymbolicLink(d.resolve("l"), Path.of("target"));
    assertEquals(Path.of("target"), Files.readSymbolicLink(l));
    assertEquals("t", Files.readString(l));
    assertEquals("6", stat("%s", l), "a symlink's size is its target's length");
    Files.createSymbolicLink(d.resolve("dangling"), Path.of("nowhere"));
    assertThrows(NoSuchFileException.class, () -> Files.readString(d.resolve("dangling")));
  }

  @Test
  void chmodChownAndNanosecondTimes() throws Exception {
    Path f = Files.writeString(d.resolve("f"), "");
    Sh.run("chmod", "4751", f.toString()).ok();
    assertEquals("4751", stat("%a", f));
    Sh.run("chown", "1234:5678", f.toString()).ok();
    assertEquals("1234:5678", stat("%u:%g", f));
    Sh.run("touch", "-m", "-d", "2021-03-04 05:06:07.123456789 UTC", f.toString()).ok();
    assertEquals("1614834367.123456789", stat("%.9Y", f));
    Instant t = Instant.parse("2020-01-02T03:04:05.000000001Z");
    Files.setAttribute(f, "lastAccessTime", FileTime.from(t));
    assertEquals("1577934245.000000001", stat("%.9X", f));
  }

  @Test
  void specialFiles() throws Exception {
    Sh.run("mkfifo", d.resolve("fifo").toString()).ok();
    assertEquals("fifo", stat("%F", d.resolve("fifo")));
    Sh.run("mknod", d.resolve("null").toString(), "c", "1", "3").ok();
    assertEquals("character special file 1,3", stat("%F %Hr,%Lr", d.resolve("null")));
  }

  @Test
  void namesAreBounded() throws Exception {
    Files.writeString(d.resolve("n".repeat(255)), "");
    Sh.run("touch", d.resolve("n".repeat(256)).toString()).fails("File name too long");
  }

  @Test
  void readdirListsEveryEntryOnceInPages() throws Exception {
    Path big = Files.createDirectory(d.resolve("big"));
    Set<String> made = new HashSet<>();
    for (int i = 0; i < 5000; i++) {
      made.add("file-" + i);
      Files.createFile(big.resolve("file-" + i));
    }
    Set<String> seen = new HashSet<>();
    try (Stream<Path> s = Files.list(big)) {
      s.forEach(p -> assertTrue(seen.add(p.getFileName().toString()), "listed twice: " + p));
    }
    assertEquals(made, seen);
  }

  @Test
  void xattrsInEveryNamespace() throws Exception {
    Path f = Files.writeString(d.resolve("f"), "");
    for (String ns : new String[] {"user", "trusted", "security"}) {
      Sh.run("setfattr", "-n", ns + ".k", "-v", "v-" + ns, f.toString()).ok();
      assertEquals("v-" + ns, Sh.run("getfattr", "--only-values", "-n", ns + ".k",
          "--absolute-names", f.toString()).ok().out());
    }
    String all = Sh.run("getfattr", "-d", "-m", "-", "--absolute-names", f.toString()).ok().out();
    assertTrue(all.contains("user.k=\"v-user\"") && all.contains("trusted.k=\"v-trusted\""), all);
    Sh.run("setfattr", "-x", "user.k", f.toString()).ok();
    Sh.run("getfattr", "-n", "user.k", f.toString()).fails("No such attribute");
    Sh.run("setfattr", "-n", "other.k", "-v", "1", f.toString()).fails("Operation not supported");
  }

  @Test
  void permissionsAreEnforcedForOtherUsers() throws Exception {
    Path closed = Files.createDirectory(d.resolve("closed"));
    Sh.run("chmod", "755", closed.toString()).ok();
    Sh.as(Sh.NOBODY, Sh.NOBODY, "touch", closed.resolve("x").toString()).fails("Permission denied");
    Path secret = Files.writeString(d.resolve("secret"), "s");
    Sh.run("chmod", "600", secret.toString()).ok();
    Sh.as(Sh.NOBODY, Sh.NOBODY, "cat", secret.toString()).fails("Permission denied");
    Sh.as(Sh.NOBODY, Sh.NOBODY, "chmod", "777", secret.toString()).fails("Operation not permitted");
  }

  @Test
  void stickyDirectoriesProtectOthersEntries() throws Exception {
    Path sticky = Files.createDirectory(d.resolve("sticky"));
    Sh.run("chmod", "1777", sticky.toString()).ok();
    Sh.as(1001, 1001, "touch", sticky.resolve("mine").toString()).ok();
    Sh.as(1002, 1002, "rm", "-f", sticky.resolve("mine").toString())
        .fails("Operation not permitted");
    Sh.as(1001, 1001, "rm", "-f", sticky.resolve("mine").toString()).ok();
  }

  @Test
  void setgidDirectoriesPassTheirGroupOn() throws Exception {
    Path shared = Files.createDirectory(d.resolve("shared"));
    Sh.run("chown", "0:4321", shared.toString()).ok();
    Sh.run("chmod", "2777", shared.toString()).ok();
    Sh.as(1001, 1001, "touch", shared.resolve("f").toString()).ok();
    assertEquals("4321", stat("%g", shared.resolve("f")));
    Sh.as(1001, 1001, "mkdir", shared.resolve("sub").toString()).ok();
    assertEquals("4321", stat("%g", shared.resolve("sub")));
    assertTrue(stat("%A", shared.resolve("sub")).contains("s"), "subdir lost setgid");
  }

  @Test
  void statfsReportsRealSpace() throws Exception {
    long before = Long.parseLong(Sh.run("stat", "-f", "-c", "%a", d.toString()).ok().out().strip());
    Path f = d.resolve("f");
    try (FileChannel ch = FileChannel.open(f, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
      ch.write(ByteBuffer.allocate(16 << 20));
      ch.force(true);
    }
    long after = Long.parseLong(Sh.run("stat", "-f", "-c", "%a", d.toString()).ok().out().strip());
    assertTrue(before - after >= 4096, "free blocks " + before + " -> " + after);
  }

  @Test
  void anUnlinkedOpenFileStaysReadable() throws Exception {
    Path f = Files.writeString(d.resolve("f"), "still here");
    try (FileChannel ch = FileChannel.open(f)) {
      Files.delete(f);
      ByteBuffer b = ByteBuffer.allocate(64);
      ch.read(b, 0);
      assertEquals("still here", new String(b.array(), 0, b.position(), StandardCharsets.UTF_8));
    }
    try (Stream<Path> s = Files.list(d)) {
      assertEquals(0, s.count(), "a hidden file was left behind");
    }
  }

  @Test
  void writesAndTruncatesByOthersTakeSetIdBitsAway() throws Exception {
    for (String mode : new String[] {"4777", "2777", "6777"}) {
      Path f = Files.writeString(d.resolve("w" + mode), "x");
      Sh.run("chmod", mode, f.toString()).ok();
      Sh.as(Sh.NOBODY, Sh.NOBODY, "sh", "-c", "printf y >> " + f).ok();
      assertEquals("777", stat("%a", f), "write to " + mode);
      Path t = Files.writeString(d.resolve("t" + mode), "x");
      Sh.run("chmod", mode, t.toString()).ok();
      Sh.as(Sh.NOBODY, Sh.NOBODY, "truncate", "-s", "0", t.toString()).ok();
      assertEquals("777 0", stat("%a %s", t), "truncate of " + mode);
    }
    Path lock = Files.writeString(d.resolve("lock"), "x");
    Sh.run("chmod", "2767", lock.toString()).ok();
    Sh.as(Sh.NOBODY, Sh.NOBODY, "sh", "-c", "printf y >> " + lock).ok();
    assertEquals("767", stat("%a", lock), "a writer outside the group");
    Path mine = Files.writeString(d.resolve("mine"), "x");
    Sh.run("chmod", "6777", mine.toString()).ok();
    Sh.run("sh", "-c", "printf y >> " + mine).ok();
    assertEquals("6777", stat("%a", mine), "root keeps them");
  }

  @Test
  void theOwnerGivesAFileToItsSupplementaryGroups() throws Exception {
    Path g = Files.writeString(d.resolve("g"), "x");
    Sh.run("chown", "65534:65533", g.toString()).ok();
    Sh.asWithGroups(65534, 65534, "65533,65532", "chgrp", "65532", g.toString()).ok();
    assertEquals("65532", stat("%g", g));
    Sh.asWithGroups(65534, 65534, "65533,65532", "chgrp", "65531", g.toString())
        .fails("Operation not permitted");
    Sh.run("chmod", "2775", g.toString()).ok();
    Sh.asWithGroups(65534, 65534, "65532", "sh", "-c", "printf y >> " + g).ok();
    assertEquals("775", stat("%a", g), "a set-group-ID executable loses it at a member's write");
  }

  @Test
  void fstatOfAnUnlinkedOpenFile() throws Exception {
    Path f = Files.writeString(d.resolve("f"), "0123456789");
    String out = Sh.run("sh", "-c", "exec 3<" + f + "; rm " + f
        + "; stat -L -c '%s %h' /proc/self/fd/3; printf abc >> /proc/self/fd/3;"
        + " stat -L -c '%s %h' /proc/self/fd/3").ok().out();
    assertEquals("10 0\n13 0\n", out, "fstat before and after an append through /proc");
    try (Stream<Path> s = Files.list(d)) {
      assertEquals(0, s.count(), "a hidden name was left behind");
    }
  }

  @Test
  void timesSetBeforeCloseStick() throws Exception {
    Path src = Files.createDirectories(tmp.resolve("tar-src"));
    for (int i = 0; i < 5; i++) {
      Files.write(src.resolve("f" + i), new byte[10_000 * (i + 1)]);
    }
    Sh.run("sh", "-c", "touch -m -d '2020-01-01 00:00:00 UTC' " + src + "/f*").ok();
    Path archive = tmp.resolve("t.tar");
    Sh.run("tar", "cf", archive.toString(), "-C", src.toString(), ".").ok();
    Path into = Files.createDirectory(d.resolve("x"));
    Sh.run("tar", "xf", archive.toString(), "-C", into.toString()).ok();
    Sh.run("cp", "-p", src.resolve("f4").toString(), d.resolve("copy").toString()).ok();
    for (int i = 0; i < 5; i++) {
      assertEquals("1577836800 " + 10_000 * (i + 1), stat("%Y %s", into.resolve("f" + i)),
          "tar x kept f" + i + "'s time");
    }
    assertEquals("1577836800", stat("%Y", d.resolve("copy")), "cp -p");
    Path f = d.resolve("set-by-path");
    try (FileChannel ch = FileChannel.open(f, StandardOpenOption.CREATE,
        StandardOpenOption.WRITE)) {
      ch.write(ByteBuffer.allocate(5000));
      Files.setLastModifiedTime(f, FileTime.from(Instant.parse("2020-01-01T00:00:00Z")));
    }
    assertEquals("1577836800 5000", stat("%Y %s", f), "utimensat(path) before close");
  }

  /**
   * copy_file_range(2) between two files: ranges, offsets and a short copy at the source's end
   * as on a local filesystem (the low-level front end copies inside the node; the libfuse 2 one
   * leaves it to the kernel's read/write fallback).
   */
  @Test
  void copyFileRangeCopiesRangesAndStopsAtTheEnd() throws Exception {
    Path src = d.resolve("cfr-src");
    Path dst = d.resolve("cfr-dst");
    byte[] data = new byte[3 * 1024 * 1024 + 123];
    new java.util.Random(42).nextBytes(data);
    Files.write(src, data);
    Files.write(dst, new byte[10]);
    String py = String.join("\n",
        "import os, sys",
        "s = os.open(sys.argv[1], os.O_RDONLY); t = os.open(sys.argv[2], os.O_WRONLY)",
        "a = os.copy_file_range(s, t, 5000, 100, 5)",
        "b = os.copy_file_range(s, t, len(open(sys.argv[1], 'rb').read()), 0, 5005)",
        "print(a, b)");
    Sh.Out out = Sh.run("python3", "-c", py, src.toString(), dst.toString()).ok();
    assertEquals("5000 " + data.length, out.out().trim());
    byte[] got = Files.readAllBytes(dst);
    assertEquals(5005 + data.length, got.length);
    assertEquals(0, got[0]);
    assertTrue(java.util.Arrays.equals(data, 100, 5100, got, 5, 5005), "the first range");
    assertTrue(java.util.Arrays.equals(data, 0, data.length, got, 5005, got.length),
        "the whole file after it");
    // past the source's end nothing is copied
    Sh.Out none = Sh.run("python3", "-c", String.join("\n",
        "import os, sys",
        "s = os.open(sys.argv[1], os.O_RDONLY); t = os.open(sys.argv[2], os.O_WRONLY)",
        "print(os.copy_file_range(s, t, 10, " + data.length + ", 0))"),
        src.toString(), dst.toString()).ok();
    assertEquals("0", none.out().trim());
  }

  /**
   * lseek(2) SEEK_DATA and SEEK_HOLE on a sparse file (a block at 0 and one at 1 MiB), while its
   * writes are buffered, after it grew by ftruncate, reopened read-only and write-only. The
   * low-level front end answers from the extent map, block by block; the libfuse 2 one has no
   * lseek, so the kernel answers as for a file without holes (data where asked, the hole at the
   * end). Each answer is "data/hole" at one offset, ENXIO past the end or where no data follows.
   */
  @Test
  void seekDataAndSeekHoleFindTheHoles() throws Exception {
    Path f = d.resolve("sparse");
    String py = String.join("\n",
        "import errno, os, sys",
        "MIB = 1 << 20",
        "def ask(fd, off, how):",
        "  try:",
        "    return str(os.lseek(fd, off, how))",
        "  except OSError as e:",
        "    return errno.errorcode[e.errno]",
        "def probe(fd, offs):",
        "  print(' '.join(ask(fd, o, os.SEEK_DATA) + '/' + ask(fd, o, os.SEEK_HOLE)",
        "                 for o in offs))",
        "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)",
        "os.pwrite(fd, b'x' * 4096, 0)",
        "os.pwrite(fd, b'y' * 4096, MIB)",
        "probe(fd, [0, 100, 4096, 5000, MIB, MIB + 10, MIB + 4096])",
        "os.ftruncate(fd, 3 * MIB)",
        "probe(fd, [MIB + 4096, 2 * MIB, 3 * MIB - 1, 3 * MIB])",
        "os.close(fd)",
        "fd = os.open(sys.argv[1], os.O_RDONLY)",
        "probe(fd, [0, 4096, MIB, MIB + 4096, 3 * MIB])",
        "os.close(fd)",
        "fd = os.open(sys.argv[1], os.O_WRONLY)",
        "probe(fd, [4096])");
    String out = Sh.run("python3", "-c", py, f.toString()).ok().out();
    long mib = 1 << 20;
    long[] buffered = {0, 100, 4096, 5000, mib, mib + 10, mib + 4096};
    long[] grown = {mib + 4096, 2 * mib, 3 * mib - 1, 3 * mib};
    long[] reopened = {0, 4096, mib, mib + 4096, 3 * mib};
    long[] writeOnly = {4096};
    String expected;
    if ("highlevel".equals(System.getProperty("etcfs.frontend"))) {
      expected = allData(mib + 4096, buffered) + allData(3 * mib, grown)
          + allData(3 * mib, reopened) + allData(3 * mib, writeOnly);
    } else {
      expected = String.join("\n",
          "0/4096 100/4096 1048576/4096 1048576/5000 1048576/1052672 1048586/1052672 ENXIO/ENXIO",
          "ENXIO/1052672 ENXIO/2097152 ENXIO/3145727 ENXIO/ENXIO",
          "0/4096 1048576/4096 1048576/1052672 ENXIO/1052672 ENXIO/ENXIO",
          "1048576/4096", "");
    }
    assertEquals(expected, out);
  }

  /**
   * fallocate(1) --punch-hole as on ext4 (the low-level front end): the range reads as zeros,
   * its whole blocks are freed (st_blocks falls by them, SEEK_HOLE finds them), the size stays.
   * Preallocation sets blocks aside (st_blocks counts them, the range reads as zeros), and
   * posix_fallocate works; KEEP_SIZE past the end is refused (EOPNOTSUPP). The
   * libfuse 2 front end has no fallocate: everything is refused, posix_fallocate (which glibc
   * then does by writing zeros) still works.
   */
  @Test
  void punchingAHoleFreesItsBlocksAndPreallocationSetsThemAside() throws Exception {
    Path f = d.resolve("punched");
    byte[] content = new byte[10 * 4096];
    new java.util.Random(7).nextBytes(content);
    Files.write(f, content);
    Sh.run("sync", f.toString()).ok();
    long before = Long.parseLong(stat("%b", f));
    Sh.Out punch = Sh.run("fallocate", "--punch-hole", "--offset", "6144", "--length", "24576",
        f.toString());
    Sh.Out prealloc = Sh.run("fallocate", "--length", "1M", d.resolve("pre").toString());
    Sh.run("python3", "-c", "import os, sys; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT);"
        + " os.posix_fallocate(fd, 0, 65536); os.close(fd)", d.resolve("posix").toString()).ok();
    assertEquals("65536", stat("%s", d.resolve("posix")));
    if ("highlevel".equals(System.getProperty("etcfs.frontend"))) {
      // util-linux words EOPNOTSUPP with --punch-hole as "keep size mode is unsupported"
      assertTrue(punch.exit() != 0 && punch.err().contains("unsupported"), punch.toString());
      assertTrue(prealloc.exit() != 0 && prealloc.err().contains("Operation not supported"),
          prealloc.toString());
      return;
    }
    assertEquals(0, punch.exit(), punch.toString());
    java.util.Arrays.fill(content, 6144, 6144 + 24576, (byte) 0);
    assertArrayEquals(content, Files.readAllBytes(f));
    assertEquals(String.valueOf(content.length), stat("%s", f));
    // blocks 2..6 (8192..28672) are whole inside the range: five 4 KiB blocks, 40 sectors
    assertEquals(before - 40, Long.parseLong(stat("%b", f)));
    String py = "import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY);"
        + " print(os.lseek(fd, 0, os.SEEK_HOLE), os.lseek(fd, 8192, os.SEEK_DATA))";
    assertEquals("8192 28672\n", Sh.run("python3", "-c", py, f.toString()).ok().out());
    assertEquals(0, prealloc.exit(), prealloc.toString());
    assertEquals("1048576 2048", stat("%s %b", d.resolve("pre")));
    assertArrayEquals(new byte[1 << 20], Files.readAllBytes(d.resolve("pre")));
    Sh.Out keep = Sh.run("fallocate", "--keep-size", "--length", "2M", d.resolve("pre").toString());
    // util-linux words EOPNOTSUPP with --keep-size as "keep size mode is unsupported"
    assertTrue(keep.exit() != 0 && keep.err().contains("unsupported"), keep.toString());
    assertEquals("1048576 2048", stat("%s %b", d.resolve("pre")), "nothing changed");
  }

  /** The kernel's answers for a file without holes: data where asked, the hole at the end. */
  private static String allData(long size, long... offsets) {
    StringBuilder line = new StringBuilder();
    for (long off : offsets) {
      line.append(line.length() == 0 ? "" : " ")
          .append(off < size ? off + "/" + size : "ENXIO/ENXIO");
    }
    return line.append('\n').toString();
  }

  @Test
  void sparseFilesReachTheLargestFileSizeNotTheDevices() throws Exception {
    Path f = d.resolve("sparse");
    Sh.run("truncate", "-s", "20T", f.toString()).ok();
    assertEquals(String.valueOf(20L << 40) + " 0", stat("%s %b", f));
    Sh.run("truncate", "-s", "3E", f.toString()).fails("File too large");
    assertEquals(String.valueOf(20L << 40), stat("%s", f));
  }

  /**
   * The libfuse 2 front end opens every file with direct_io, so the kernel refuses MAP_SHARED;
   * the low-level front end keeps the page cache under the inode lock, and a shared mapping
   * reads, writes and msyncs like on a local filesystem. Private mappings work on both.
   */
  @Test
  void sharedMappingsWorkWithThePageCachePrivateOnesAlways() throws Exception {
    Path f = Files.writeString(d.resolve("m"), "mapped");
    if ("highlevel".equals(System.getProperty("etcfs.frontend"))) {
      try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
        IOException e = assertThrows(IOException.class,
            () -> ch.map(FileChannel.MapMode.READ_ONLY, 0, 6)); // MAP_SHARED, PROT_READ
        assertTrue(String.valueOf(e.getMessage()).contains("No such device"), e.toString());
      }
    } else {
      try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ,
          StandardOpenOption.WRITE)) {
        java.nio.MappedByteBuffer m = ch.map(FileChannel.MapMode.READ_WRITE, 0, 6); // MAP_SHARED
        byte[] b = new byte[6];
        m.get(b);
        assertEquals("mapped", new String(b, StandardCharsets.UTF_8));
        m.put(0, "MAPPED".getBytes(StandardCharsets.UTF_8));
        m.force(); // msync
      }
      assertEquals("MAPPED", Files.readString(f));
    }
    try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      ByteBuffer m = ch.map(FileChannel.MapMode.PRIVATE, 0, 6); // copy-on-write: Java wants RW
      byte[] b = new byte[6];
      m.get(b);
      assertEquals(Files.readString(f), new String(b, StandardCharsets.UTF_8));
    }
  }

  /** rename(2) itself (mv checks some cases before asking the filesystem): "ok" or strerror. */
  private static String rename(Path from, Path to) {
    try {
      Files.move(from, to, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
      return "ok";
    } catch (DirectoryNotEmptyException e) {
      return "Directory not empty";
    } catch (java.nio.file.FileSystemException e) {
      return e.getReason();
    } catch (IOException e) {
      return e.toString();
    }
  }

  private static String stat(String format, Path p) throws Exception {
    return Sh.run("stat", "-c", format, p.toString()).ok().out().strip();
  }
}

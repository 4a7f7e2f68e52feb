package io.etcfs.fuse.internal;

import io.etcfs.fuse.common.DirHandle;
import io.etcfs.fuse.common.MountInfo;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserDefinedFileAttributeView;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The front end mounted for real on {@link MemoryVfs}, driven through the kernel. */
@Timeout(120)
class FuseOperationsTest {
  private static TestMount mnt;

  @BeforeAll
  static void mount() throws IOException {
    mnt = TestMount.start(new MemoryVfs(), true);
  }

  @AfterAll
  static void unmount() throws IOException {
    if (mnt != null) {
      mnt.close();
    }
  }

  @Test
  void writesAndReadsBack() throws IOException {
    Path file = mnt.path("hello.txt");
    Files.writeString(file, "hello, etcfs");
    assertEquals("hello, etcfs", Files.readString(file));
    assertEquals(12, Files.size(file));
    assertTrue(Files.isRegularFile(file));
  }

  @Test
  void largeFileGoesThroughInMaxWriteChunks() throws IOException {
    byte[] data = new byte[16 * 1024 * 1024 + 12345];
    new Random(42).nextBytes(data);
    Path file = mnt.path("large.bin");
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW,
        StandardOpenOption.WRITE)) {
      ByteBuffer all = ByteBuffer.allocateDirect(data.length).put(data).flip();
      while (all.hasRemaining()) {
        ch.write(all); // one write(2) of 16 MiB: the kernel cuts it into max_write pieces
      }
    }
    assertArrayEquals(data, Files.readAllBytes(file));
    assertEquals(MountOptions.MAX_WRITE, mnt.vfs.largestWrite.get(), "big_writes + max_write");
  }

  @Test
  void readdirPagesThroughTenThousandEntries() throws IOException {
    Path dir = Files.createDirectory(mnt.path("many"));
    Set<String> made = new TreeSet<>();
    for (int i = 0; i < 10_000; i++) {
      String name = "entry-with-a-longish-name-" + i;
      Files.createFile(dir.resolve(name));
      made.add(name);
    }
    int before = mnt.vfs.count("readdir");
    Set<String> listed;
    try (Stream<Path> list = Files.list(dir)) {
      listed = list.map(p -> p.getFileName().toString()).collect(Collectors.toCollection(TreeSet::new));
    }
    assertEquals(made, listed);
    int pages = mnt.vfs.count("readdir") - before;
    assertTrue(pages >= 10_000 / DirHandle.PAGE, "Vfs pages asked: " + pages);
    assertTrue(pages <= 10_000 / DirHandle.PAGE + 2, "each Vfs page asked once: " + pages);
  }

  @Test
  void listsDotAndDotDotWithInodeNumbers() throws IOException, InterruptedException {
    Path dir = Files.createDirectory(mnt.path("dots"));
    Files.createFile(dir.resolve("x"));
    String ls = run("ls", "-ai", dir.toString());
    assertTrue(ls.matches("(?s).*\\d+ \\.\\s.*\\d+ \\.\\.\\s.*\\d+ x.*"), ls);
    assertEquals(inode(dir), Long.parseLong(ls.trim().split("\\s+")[0]), ls);
  }

  @Test
  void renamesReplacingTheTarget() throws IOException {
    Path a = Files.writeString(mnt.path("ren-a"), "A");
    Path b = Files.writeString(mnt.path("ren-b"), "B");
    Files.move(a, b, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    assertFalse(Files.exists(a));
    assertEquals("A", Files.readString(b));
    Path sub = Files.createDirectory(mnt.path("ren-dir"));
    Files.move(b, sub.resolve("moved"));
    assertEquals("A", Files.readString(sub.resolve("moved")));
  }

  @Test
  void hardLinkSharesTheInode() throws IOException, InterruptedException {
    Path a = Files.writeString(mnt.path("link-a"), "shared");
    Path b = Files.createLink(mnt.path("link-b"), a);
    assertEquals(inode(a), inode(b), "use_ino");
    assertEquals("2", run("stat", "-c", "%h", b.toString()).trim());
    assertEquals("shared", Files.readString(b));
    assertThrows(FileAlreadyExistsException.class, () -> Files.createLink(b, a));
  }

  @Test
  void symlinkResolves() throws IOException {
    Files.writeString(mnt.path("sym-target"), "through the link");
    Path link = Files.createSymbolicLink(mnt.path("sym"), Path.of("sym-target"));
    assertEquals(Path.of("sym-target"), Files.readSymbolicLink(link));
    assertEquals("through the link", Files.readString(link));
  }

  @Test
  void chmodChownAndTruncate() throws IOException, InterruptedException {
    Path file = Files.writeString(mnt.path("attrs"), "0123456789");
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwx--x---"));
    assertEquals("710", run("stat", "-c", "%a", file.toString()).trim());
    run("chown", "1234:5678", file.toString());
    assertEquals("1234 5678", run("stat", "-c", "%u %g", file.toString()).trim());
    run("chown", ":42", file.toString());
    assertEquals("1234 42", run("stat", "-c", "%u %g", file.toString()).trim());
    run("truncate", "-s", "4", file.toString());
    assertEquals("0123", Files.readString(file));
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
      ch.truncate(2); // ftruncate
    }
    assertEquals("01", Files.readString(file));
  }

  @Test
  void openWithTruncateIsAtomic() throws IOException {
    Path file = Files.writeString(mnt.path("otrunc"), "long old content");
    int setattrs = mnt.vfs.count("setattr");
    Files.writeString(file, "new", StandardOpenOption.TRUNCATE_EXISTING);
    int last = mnt.vfs.openFlags.get(mnt.vfs.openFlags.size() - 1);
    assertTrue((last & MemoryVfs.O_TRUNC) != 0, "atomic_o_trunc: O_TRUNC reaches open");
    assertEquals(setattrs, mnt.vfs.count("setattr"), "no separate truncate");
    assertEquals("new", Files.readString(file));
  }

  @Test
  void utimensSetsOneTimeAndLeavesTheOther() throws IOException, InterruptedException {
    Path file = Files.writeString(mnt.path("times"), "t");
    run("touch", "-a", "-d", "@1000000000", file.toString());
    run("touch", "-m", "-d", "@1500000000.25", file.toString());
    assertEquals("1000000000 1500000000", run("stat", "-c", "%X %Y", file.toString()).trim(),
        "utime_omit_ok: one time set, the other omitted");
    assertTrue(run("stat", "-c", "%y", file.toString()).contains(".250000000"));
  }

  @Test
  void xattrsRoundTrip() throws IOException {
    Path file = Files.writeString(mnt.path("xattr"), "x");
    UserDefinedFileAttributeView view =
        Files.getFileAttributeView(file, UserDefinedFileAttributeView.class);
    view.write("etcfs.test", StandardCharsets.UTF_8.encode("value-1"));
    view.write("etcfs.other", ByteBuffer.wrap(new byte[3000]));
    assertEquals(List.of("etcfs.test", "etcfs.other"), view.list());
    ByteBuffer read = ByteBuffer.allocate(view.size("etcfs.test"));
    view.read("etcfs.test", read);
    assertEquals("value-1", new String(read.array(), StandardCharsets.UTF_8));
    view.delete("etcfs.test");
    assertEquals(List.of("etcfs.other"), view.list());
    assertThrows(IOException.class, () -> view.size("etcfs.test"));
  }

  @Test
  void newFilesGetTheCallersUmaskApplied() throws IOException, InterruptedException {
    String out = run("sh", "-c", "umask 027 && touch " + mnt.path("umask") + " && mkdir "
        + mnt.path("umask-dir") + " && stat -c %a " + mnt.path("umask") + " "
        + mnt.path("umask-dir"));
    assertEquals(List.of("640", "750"), List.of(out.trim().split("\\s+")));
  }

  @Test
  void mkfifoAndMknod() throws IOException, InterruptedException {
    run("mkfifo", mnt.path("fifo").toString());
    assertEquals("fifo", run("stat", "-c", "%F", mnt.path("fifo").toString()).trim());
  }

  @Test
  void directIoSendsEveryReadToTheVfs() throws IOException {
    Path file = Files.write(mnt.path("direct"), new byte[8192]);
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      int before = mnt.vfs.count("read");
      for (int i = 0; i < 5; i++) {
        ch.read(ByteBuffer.allocate(4096), 0);
      }
      assertEquals(5, mnt.vfs.count("read") - before, "no read served from the page cache");
    }
  }

  @Test
  void unlinkedOpenFileStaysUsable() throws IOException {
    Path file = Files.writeString(mnt.path("orphan"), "before");
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ,
        StandardOpenOption.WRITE)) {
      Files.delete(file);
      try (Stream<Path> list = Files.list(mnt.dir)) {
        assertTrue(list.noneMatch(p -> p.getFileName().toString().startsWith(".fuse_hidden")),
            "libfuse's hidden name shows in the directory");
      }
      assertEquals(6, ch.size(), "fstat of the unlinked file"); // size() is fstat(2)
      ch.write(ByteBuffer.wrap("after!!".getBytes(StandardCharsets.UTF_8)), 0);
      ByteBuffer back = ByteBuffer.allocate(7);
      ch.read(back, 0);
      assertEquals("after!!", new String(back.array(), StandardCharsets.UTF_8));
      assertEquals(7, ch.size(), "fstat after a write to the unlinked file");
    }
    assertThrows(NoSuchFileException.class, () -> Files.size(file));
    assertEquals(0, mnt.fuse.hiddenFiles(), "the hidden name forgotten at the last close");
  }

  @Test
  void removesFilesAndDirectories() throws IOException {
    Path dir = Files.createDirectory(mnt.path("rm-dir"));
    Path file = Files.writeString(dir.resolve("f"), "f");
    Files.delete(file);
    Files.delete(dir);
    assertFalse(Files.exists(dir));
  }

  @Test
  void statfsReportsTheVfs() throws IOException, InterruptedException {
    String out = run("stat", "-f", "-c", "%S %b %f %l %T", mnt.dir.toString()).trim();
    assertEquals("4096 1048576 524288 255 fuseblk", out.replace("fuse ", "fuseblk "));
  }

  @Test
  void mountShowsTypeAndSource() {
    MountInfo info = MountInfo.at(mnt.dir.toAbsolutePath()).orElseThrow();
    assertEquals("fuse.etcfs", info.type());
    assertEquals("etcfs:test", info.source());
  }

  @Test
  void appendWritesAtTheEnd() throws IOException {
    Path file = Files.writeString(mnt.path("append"), "one ");
    Files.writeString(file, "two", StandardOpenOption.APPEND);
    assertEquals("one two", Files.readString(file));
  }

  static long inode(Path path) throws IOException {
    return ((Number) Files.getAttribute(path, "unix:ino")).longValue();
  }

  static String run(String... command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(20, TimeUnit.SECONDS));
    assertEquals(0, p.exitValue(), String.join(" ", command) + ": " + out);
    return out;
  }
}

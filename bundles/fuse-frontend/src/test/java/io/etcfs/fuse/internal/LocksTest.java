package io.etcfs.fuse.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.fuse.internal.MemoryVfs.LockCall;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.PosixLock;
import io.etcfs.spi.vfs.Vfs;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import jnr.ffi.Memory;
import jnr.ffi.Runtime;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import ru.serce.jnrfuse.struct.Flock;

/**
 * fcntl and flock through the kernel onto the Vfs: struct flock to PosixLock and back, the lock
 * owner, the unlock libfuse sends on close, the flock_release bit, and errnos back to callers.
 */
@Timeout(60)
class LocksTest {
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

  @AfterEach
  void heal() {
    mnt.vfs.failing.clear();
    mnt.vfs.getlkAnswer = null;
    mnt.vfs.lockCalls.clear();
    mnt.vfs.blocking.clear();
  }

  private static FileChannel open(String name) throws IOException {
    return FileChannel.open(mnt.path(name), StandardOpenOption.CREATE, StandardOpenOption.READ,
        StandardOpenOption.WRITE);
  }

  private static List<LockCall> calls(long ino) {
    synchronized (mnt.vfs.lockCalls) {
      return mnt.vfs.lockCalls.stream().filter(c -> c.ino() == ino).toList();
    }
  }

  private static long ino(String name) throws IOException {
    return ((Number) Files.getAttribute(mnt.path(name), "unix:ino")).longValue();
  }

  /** Waits, with a deadline, for a call the kernel sends after the caller has moved on. */
  private static LockCall awaitCall(long ino, Predicate<LockCall> which) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() - deadline < 0) {
      for (LockCall c : calls(ino)) {
        if (which.test(c)) {
          return c;
        }
      }
      Thread.onSpinWait();
    }
    throw new AssertionError("no such lock call on inode " + ino + ": " + calls(ino));
  }

  @Test
  void fileChannelLocksArriveWithTheirRangeTypeAndOwner() throws Exception {
    try (FileChannel ch = open("ranges")) {
      long ino = ino("ranges");
      FileLock a = ch.tryLock(10, 20, false);
      a.release();
      FileLock b = ch.lock(0, Long.MAX_VALUE, true);
      List<LockCall> c = calls(ino);
      assertEquals(3, c.size(), c.toString());
      assertEquals("setlk", c.get(0).op());
      assertEquals(PosixLock.Type.WRITE, c.get(0).lock().type());
      assertEquals(10, c.get(0).lock().start());
      assertEquals(29, c.get(0).lock().end());
      assertEquals(ProcessHandle.current().pid(), c.get(0).lock().pid());
      assertEquals("setlk", c.get(1).op());
      assertEquals(PosixLock.Type.UNLOCK, c.get(1).lock().type());
      assertEquals(10, c.get(1).lock().start());
      assertEquals(29, c.get(1).lock().end());
      assertEquals("setlkw", c.get(2).op());
      assertEquals(new PosixLock(PosixLock.Type.READ, 0, PosixLock.EOF,
          c.get(2).lock().pid()), c.get(2).lock(), "Long.MAX_VALUE is l_len 0: to the end");
      assertNotEquals(0, c.get(0).owner());
      assertEquals(c.get(0).owner(), c.get(1).owner(), "one owner per process");
      assertEquals(c.get(0).owner(), c.get(2).owner());
      assertTrue(b.isValid());
    }
    // close(): Java releases its lock, then libfuse's flush unlocks the whole file
    List<LockCall> all = calls(ino("ranges"));
    assertEquals(5, all.size(), all.toString());
    LockCall unlock = all.get(4);
    assertEquals("setlk", unlock.op());
    assertEquals(0, unlock.lock().start());
    assertEquals(PosixLock.EOF, unlock.lock().end());
    assertEquals(PosixLock.Type.UNLOCK, unlock.lock().type());
  }

  @Test
  void everyCloseUnlocksTheWholeFileForItsProcess() throws Exception {
    Files.writeString(mnt.path("closed"), "x");
    List<LockCall> c = calls(ino("closed"));
    assertEquals(1, c.size(), c.toString());
    assertEquals("setlk", c.get(0).op());
    assertEquals(new PosixLock(PosixLock.Type.UNLOCK, 0, PosixLock.EOF, 0), c.get(0).lock());
  }

  @Test
  void eagainFromTheClusterIsALockHeldElsewhere() throws Exception {
    mnt.vfs.failing.put("setlk", new FsException(Errno.EAGAIN, "test: held on another node"));
    try (FileChannel ch = open("held")) {
      assertNull(ch.tryLock(), "tryLock answers null for EAGAIN");
    }
  }

  @Test
  void getlkAnswerReachesTheCallersStructFlock() throws Exception {
    Files.writeString(mnt.path("asked"), "x");
    mnt.vfs.getlkAnswer = new PosixLock(PosixLock.Type.READ, 100, 199, 0);
    assertEquals("0 100 100 0", getlk(mnt.path("asked"), 0, 0).strip(),
        "type F_RDLCK, start, length, pid");
    mnt.vfs.getlkAnswer = new PosixLock(PosixLock.Type.WRITE, 7, PosixLock.EOF, 0);
    assertEquals("1 7 0 0", getlk(mnt.path("asked"), 0, 0).strip());
    mnt.vfs.getlkAnswer = null;
    assertEquals("2 5 10 0", getlk(mnt.path("asked"), 5, 10).strip(), "F_UNLCK: no conflict");
    LockCall asked = calls(ino("asked")).stream().filter(c -> c.op().equals("getlk"))
        .findFirst().orElseThrow();
    assertEquals("getlk", asked.op());
    assertEquals(PosixLock.Type.WRITE, asked.lock().type());
  }

  /** perl (perl-base: on every Debian machine) asks F_GETLK for a write lock. */
  private static String getlk(Path file, long start, long len) throws Exception {
    String script = "use Fcntl; open(my $fh, '+<', $ARGV[0]) or die \"open: $!\";"
        + " my $fl = pack('s s x4 q q l x4', F_WRLCK, 0, $ARGV[1], $ARGV[2], 0);"
        + " fcntl($fh, F_GETLK, $fl) or die \"getlk: $!\";"
        + " my ($t, $w, $s, $l, $p) = unpack('s s x4 q q l x4', $fl); print \"$t $s $l $p\\n\";";
    return run("perl", "-e", script, file.toString(), Long.toString(start), Long.toString(len));
  }

  @Test
  void flockArrivesWithLockNbAndIsReleasedByTheLastClose() throws Exception {
    Path file = mnt.path("flocked");
    Files.writeString(file, "x");
    long ino = ino("flocked");
    run("flock", "-n", file.toString(), "true");
    LockCall taken = awaitCall(ino, c -> c.flockOp() == (Vfs.LOCK_EX | Vfs.LOCK_NB));
    LockCall released = awaitCall(ino, c -> c.flockOp() == Vfs.LOCK_UN);
    assertEquals(taken.owner(), released.owner(), "the release names the same owner");
    mnt.vfs.lockCalls.clear();
    run("flock", "-s", file.toString(), "true");
    awaitCall(ino, c -> c.flockOp() == Vfs.LOCK_SH);
    awaitCall(ino, c -> c.flockOp() == Vfs.LOCK_UN);
  }

  @Test
  void aFileThatWasNeverFlockedReleasesWithoutAFlockCall() throws Exception {
    Files.writeString(mnt.path("plain"), "x");
    Files.readString(mnt.path("plain"));
    long ino = ino("plain");
    // a later flock on the same inode proves earlier releases have been delivered
    run("flock", "-n", mnt.path("plain").toString(), "true");
    awaitCall(ino, c -> c.flockOp() == Vfs.LOCK_UN);
    assertEquals(2, calls(ino).stream().filter(c -> c.op().equals("flock")).count());
  }

  @Test
  void eagainFromFlockMakesFlockNFail() throws Exception {
    Files.writeString(mnt.path("busy"), "x");
    mnt.vfs.failing.put("flock", new FsException(Errno.EAGAIN, "test: held elsewhere"));
    Process p = new ProcessBuilder("flock", "-n", mnt.path("busy").toString(), "true").start();
    assertTrue(p.waitFor(30, TimeUnit.SECONDS));
    assertEquals(1, p.exitValue(), "flock -n exits 1 when the lock is held");
  }

  /**
   * A wait the kernel cannot interrupt by itself: the Vfs sees the FUSE_INTERRUPT through
   * fuse_interrupted(), answers EINTR, and the caller gets exactly what a signal gives it on a
   * local file.
   */
  @Test
  void aSignalEndsABlockedWaitAsOnALocalFile() throws Exception {
    Path file = mnt.path("contended");
    Files.writeString(file, "x");
    mnt.vfs.blocking.add(ino("contended"));
    // perl's handlers do not restart: F_SETLKW fails with EINTR
    String script = "use Fcntl; $SIG{ALRM} = sub { }; open(my $fh, '+<', $ARGV[0]) or die;"
        + " my $fl = pack('s s x4 q q l x4', F_WRLCK, 0, 0, 0, 0); alarm 1;"
        + " my $r = fcntl($fh, F_SETLKW, $fl); print $r ? 'locked' : ($! + 0) . ' ' . $!;";
    assertEquals("4 Interrupted system call", run("perl", "-e", script, file.toString()));
    // flock -w: its timer's signal ends the wait, and flock(1) says it timed out
    Process w = new ProcessBuilder("flock", "-w", "1", file.toString(), "true").start();
    assertTrue(w.waitFor(15, TimeUnit.SECONDS), "flock -w 1 returned");
    assertEquals(1, w.exitValue());
    // SIGKILL: the process is gone at once, not after the wait bound
    mnt.vfs.lockCalls.clear();
    Process k = new ProcessBuilder("flock", file.toString(), "true").start();
    awaitCall(ino("contended"), c -> c.flockOp() == Vfs.LOCK_EX);
    k.destroyForcibly();
    assertTrue(k.waitFor(10, TimeUnit.SECONDS), "a killed waiter dies");
    assertEquals(3, mnt.vfs.interruptedWaits.get(), "every wait saw its interrupt");
  }

  @Test
  void structFlockMapsBothWays() throws Exception {
    assertEquals(new PosixLock(PosixLock.Type.WRITE, 5, PosixLock.EOF, 9),
        Locks.toLock(Locks.F_WRLCK, Locks.SEEK_SET, 5, 0, 9));
    assertEquals(new PosixLock(PosixLock.Type.READ, 0, 0, 9),
        Locks.toLock(Locks.F_RDLCK, Locks.SEEK_SET, 0, 1, 9));
    assertEquals(new PosixLock(PosixLock.Type.UNLOCK, 10, 19, 0),
        Locks.toLock(Locks.F_UNLCK, Locks.SEEK_SET, 10, 10, 0));
    assertEquals(Errno.EINVAL, errno(() -> Locks.toLock(3, 0, 0, 0, 0)), "bad l_type");
    assertEquals(Errno.EINVAL, errno(() -> Locks.toLock(Locks.F_RDLCK, 1, 0, 0, 0)), "whence");
    assertEquals(Errno.EINVAL, errno(() -> Locks.toLock(Locks.F_RDLCK, 0, -1, 0, 0)));
    assertEquals(Errno.EINVAL, errno(() -> Locks.toLock(Locks.F_RDLCK, 0, 0, -5, 0)));
    assertEquals(Errno.EOVERFLOW,
        errno(() -> Locks.toLock(Locks.F_RDLCK, 0, Long.MAX_VALUE - 1, 10, 0)));
    Flock fl = Flock.of(Memory.allocateDirect(Runtime.getSystemRuntime(), 64));
    Locks.fill(new PosixLock(PosixLock.Type.WRITE, 4096, 8191, 77), fl);
    assertEquals(Locks.F_WRLCK, fl.l_type.get());
    assertEquals(4096, fl.l_start.get());
    assertEquals(4096, fl.l_len.get());
    assertEquals(77, fl.l_pid.get());
    Locks.fill(PosixLock.none(3, PosixLock.EOF), fl);
    assertEquals(Locks.F_UNLCK, fl.l_type.get());
    assertEquals(0, fl.l_len.get(), "to the end is l_len 0");
  }

  interface Call {
    void run() throws FsException;
  }

  private static int errno(Call call) {
    return assertThrows(FsException.class, call::run).errno();
  }

  private static String run(String... cmd) throws Exception {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    p.getOutputStream().close();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(30, TimeUnit.SECONDS), String.join(" ", cmd));
    assertEquals(0, p.exitValue(), String.join(" ", cmd) + ": " + out);
    return out;
  }
}

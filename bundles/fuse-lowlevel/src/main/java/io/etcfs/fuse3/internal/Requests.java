package io.etcfs.fuse3.internal;

import io.etcfs.spi.meta.NoWait;
import io.etcfs.spi.vfs.Attr;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.PosixLock;
import io.etcfs.fuse.common.Guard;
import io.etcfs.fuse.common.LockRanges;
import io.etcfs.spi.vfs.StatFs;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs requests off libfuse's threads and sends exactly one reply for each. A callback hands its
 * work here and returns, so libfuse's threads keep reading the device while a request waits on
 * etcd or on a lock — which also means the write-back requests a cache invalidation waits for
 * always find a thread. The pool grows with the work in flight (a blocking F_SETLKW must not
 * hold up the unlock that would end it) and shrinks when idle.
 *
 * <p>A failure becomes the errno the caller sees through {@link Guard}, as in the libfuse 2 front
 * end: an FsException its own, anything else EIO, logged with its stack trace once per kind.
 * After {@link #close} every request gets EIO.
 */
final class Requests {
  /** The largest write buffer kept for reuse: libfuse 3's max_write (1 MiB). */
  static final int MAX_POOLED = 1 << 20;
  private static final int POOL_SIZE = 32;
  /** Writes up to this size are copied to the heap: cheaper than a pooled native buffer. */
  private static final int SMALL_WRITE = 16 * 1024;

  @FunctionalInterface
  interface Work {
    /** Does the work and sends the reply; throws only before replying. */
    void run() throws FsException;
  }

  private final Libfuse3 lib;
  private final ExecutorService workers;
  private final Guard guard = new Guard();
  private final ConcurrentLinkedQueue<ByteBuffer> writeBuffers = new ConcurrentLinkedQueue<>();
  private final AtomicInteger pooled = new AtomicInteger();
  private final ThreadLocal<Scratch> scratch = ThreadLocal.withInitial(Scratch::new);

  Requests(Libfuse3 lib, String name) {
    this.lib = lib;
    AtomicInteger n = new AtomicInteger();
    this.workers = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 30, TimeUnit.SECONDS,
        new SynchronousQueue<>(), r -> {
          Thread t = new Thread(r, "etcfs-fuse3 " + name + " #" + n.incrementAndGet());
          t.setDaemon(true);
          return t;
        });
  }

  /** Per-thread native memory for reply structures and read data. */
  private static final class Scratch {
    final ByteBuffer structs = ByteBuffer.allocateDirect(4096);
    final long base = Mem.address(structs);
    ByteBuffer data = ByteBuffer.allocateDirect(128 * 1024);

    ByteBuffer data(int size) {
      if (data.capacity() < size) {
        data = ByteBuffer.allocateDirect(Math.max(size, data.capacity() * 2));
      }
      data.clear().limit(size);
      return data;
    }
  }

  /**
   * Whether {@link #now} answers on libfuse's thread (the default); {@code
   * -Detcfs.fuse3.answerNow=false} in a node's {@code ETCFS_NODE_JAVA_OPTS} hands every request
   * to a worker, for comparisons.
   */
  private static final boolean ANSWER_NOW =
      Boolean.parseBoolean(System.getProperty("etcfs.fuse3.answerNow", "true"));

  /**
   * Tries to answer on this thread (libfuse's), as a {@link NoWait} section: a request answered
   * from memory (a look-up or getattr the caches hold) saves the hand-over to a worker, about a
   * third of its time; one that would wait on anything throws before replying and is handed
   * over like any other. libfuse's threads never wait this way, so a recall that waits for the
   * kernel's write-back always finds one to read its writes.
   *
   * @return whether the request was answered; if not, nothing was sent and the caller submits
   */
  private boolean now(String op, long req, Work work) {
    if (!ANSWER_NOW) {
      return false;
    }
    Integer result;
    try {
      result = NoWait.call(() -> guard.run(op, "", () -> {
        work.run();
        return 0;
      }));
    } catch (Exception e) { // guard.run lets nothing but WouldBlock out, which call() catches
      result = -Errno.EIO;
    }
    if (result == null) {
      return false;
    }
    if (result < 0) {
      lib.fuse_reply_err(req, -result);
    }
    return true;
  }

  /** Answers here if it can ({@link #now}), else on a worker ({@link #submit}). */
  void answer(String op, long req, Work work) {
    if (!now(op, req, work)) {
      submit(op, req, work);
    }
  }

  void submit(String op, long req, Work work) {
    try {
      workers.execute(() -> run(op, req, work));
    } catch (RejectedExecutionException e) {
      lib.fuse_reply_err(req, Errno.EIO);
    }
  }

  /** The work replies itself; a failure (or a closed front end) is answered with its errno. */
  private void run(String op, long req, Work work) {
    int result = guard.run(op, "", () -> {
      work.run();
      return 0;
    });
    if (result < 0) {
      lib.fuse_reply_err(req, -result);
    }
  }

  /** Later requests get EIO; work in flight finishes. */
  void close() {
    guard.close();
    workers.shutdown();
  }

  /**
   * Waits, at most {@code bound}, for the work in flight to end: a release commits what the
   * file buffered, and must do so before the filesystem below is closed and the node leaves.
   *
   * @return false if some was still running at the bound
   */
  boolean awaitIdle(java.time.Duration bound) {
    try {
      return workers.awaitTermination(bound.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  // ---- buffers

  /** A copy of a write's data, which lives in libfuse's buffer only during the callback. */
  ByteBuffer copyIn(long address, int size) {
    if (size <= SMALL_WRITE) {
      byte[] bytes = new byte[size];
      Mem.IO.getByteArray(address, bytes, 0, size);
      return ByteBuffer.wrap(bytes);
    }
    ByteBuffer b = size <= MAX_POOLED ? writeBuffers.poll() : null;
    if (b == null) {
      b = ByteBuffer.allocateDirect(Math.max(size, size <= MAX_POOLED ? MAX_POOLED : size));
    } else {
      pooled.decrementAndGet();
    }
    b.clear().limit(size);
    Mem.IO.copyMemory(address, Mem.address(b), size);
    return b;
  }

  void recycle(ByteBuffer b) {
    if (!b.isDirect()) {
      return;
    }
    if (b.capacity() == MAX_POOLED && pooled.incrementAndGet() <= POOL_SIZE) {
      writeBuffers.add(b);
    } else if (b.capacity() == MAX_POOLED) {
      pooled.decrementAndGet();
    }
  }

  ByteBuffer readBuffer(int size) {
    return scratch.get().data(size);
  }

  DirBuffer dirBuffer(int size, boolean plus, CacheSettings cache) {
    Scratch s = scratch.get();
    return new DirBuffer(Mem.address(s.data(size)), size, plus, cache);
  }

  // ---- replies (each sends the one reply of its request)

  void replyOk(long req) {
    lib.fuse_reply_err(req, 0);
  }

  void replyEntry(long req, Attr a, double attrSeconds, double entrySeconds) {
    long e = scratch.get().base;
    Mem.putEntry(e, a.ino(), a, attrSeconds, entrySeconds);
    lib.fuse_reply_entry(req, e);
  }

  /** "No such name", cached by the kernel for {@code seconds} (an entry with inode 0). */
  void replyNegative(long req, double seconds) {
    long e = scratch.get().base;
    Mem.clear(e, Mem.ENTRY_SIZE);
    Mem.IO.putDouble(e + Mem.ENTRY_ENTRY_TIMEOUT, seconds);
    lib.fuse_reply_entry(req, e);
  }

  void replyAttr(long req, Attr a, double attrSeconds) {
    long st = scratch.get().base;
    Mem.putStat(st, a);
    lib.fuse_reply_attr(req, st, attrSeconds);
  }

  void replyReadlink(long req, String target) {
    byte[] utf8 = target.getBytes(StandardCharsets.UTF_8);
    ByteBuffer b = scratch.get().data(utf8.length + 1);
    Mem.putString(Mem.address(b), utf8);
    lib.fuse_reply_readlink(req, Mem.address(b));
  }

  private long fileInfo(int flags, long fh, int bits) {
    long fi = scratch.get().base + 512;
    Mem.clear(fi, Mem.FI_SIZE);
    Mem.IO.putInt(fi + Mem.FI_FLAGS, flags);
    Mem.IO.putInt(fi + Mem.FI_BITS, bits);
    Mem.IO.putLong(fi + Mem.FI_FH, fh);
    return fi;
  }

  /** {@code bits}: the fuse_file_info flags (direct_io, keep_cache) for this open. */
  void replyOpen(long req, int flags, long fh, int bits) {
    lib.fuse_reply_open(req, fileInfo(flags, fh, bits));
  }

  void replyOpenDir(long req, int flags, long fh) {
    lib.fuse_reply_open(req, fileInfo(flags, fh, 0));
  }

  void replyCreate(long req, Attr a, double attrSeconds, double entrySeconds, int flags, long fh,
      int bits) {
    long e = scratch.get().base;
    Mem.putEntry(e, a.ino(), a, attrSeconds, entrySeconds);
    lib.fuse_reply_create(req, e, fileInfo(flags, fh, bits));
  }

  void replyWrite(long req, int count) {
    lib.fuse_reply_write(req, count);
  }

  /** The offset lseek's SEEK_DATA or SEEK_HOLE found. */
  void replyLseek(long req, long offset) {
    lib.fuse_reply_lseek(req, offset);
  }

  void replyBuf(long req, long address, int size) {
    lib.fuse_reply_buf(req, address, size);
  }

  void replyStatfs(long req, StatFs fs) {
    long s = scratch.get().base;
    Mem.putStatvfs(s, fs);
    lib.fuse_reply_statfs(req, s);
  }

  /** getxattr / listxattr's size protocol: size 0 asks for the length; too small is ERANGE. */
  void replyXattr(long req, byte[] value, long size) throws FsException {
    if (size == 0) {
      lib.fuse_reply_xattr(req, value.length);
      return;
    }
    if (size < value.length) {
      throw new FsException(Errno.ERANGE, value.length + " bytes do not fit in " + size);
    }
    ByteBuffer b = scratch.get().data(Math.max(value.length, 1));
    b.put(value);
    lib.fuse_reply_buf(req, Mem.address(b), value.length);
  }

  void replyLock(long req, PosixLock lock) {
    long fl = scratch.get().base + 768;
    Mem.clear(fl, Mem.FLOCK_SIZE);
    Mem.IO.putShort(fl, LockRanges.type(lock));
    Mem.IO.putShort(fl + 2, LockRanges.SEEK_SET);
    Mem.IO.putLong(fl + 8, lock.start());
    Mem.IO.putLong(fl + 16, LockRanges.length(lock));
    Mem.IO.putInt(fl + 24, lock.pid());
    lib.fuse_reply_lock(req, fl);
  }
}

package io.etcfs.fuse3.internal;

import io.etcfs.fuse.common.FuseLoop;
import io.etcfs.fuse.common.Preflight;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.OpenFile;
import io.etcfs.spi.vfs.Vfs;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One mount on libfuse 3's low-level API: a session with etcfs's operations table, mounted by
 * fuse_session_mount (which returns once the kernel has the mount), and the loop that reads its
 * requests on a set of Java threads ({@link #runLoop}). Closing unmounts with fusermount -u,
 * lazily if the mount is busy, waits a bounded time for the loop to end, and frees the session
 * only once it has.
 */
final class Fuse3Session implements AutoCloseable {
  private static final Logger LOG = System.getLogger(Fuse3Session.class.getName());
  static final String TYPE = "etcfs";
  static final String FS_TYPE = "fuse." + TYPE;

  /** FUSE_CAP_* bits (fuse_common.h). */
  static final int CAP_ASYNC_READ = 1;
  static final int CAP_POSIX_LOCKS = 1 << 1;
  static final int CAP_ATOMIC_O_TRUNC = 1 << 3;
  static final int CAP_FLOCK_LOCKS = 1 << 10;
  static final int CAP_AUTO_INVAL_DATA = 1 << 12;
  static final int CAP_READDIRPLUS = 1 << 13;
  static final int CAP_READDIRPLUS_AUTO = 1 << 14;
  static final int CAP_WRITEBACK_CACHE = 1 << 16;
  static final int CAP_PARALLEL_DIROPS = 1 << 18;
  static final int CAP_HANDLE_KILLPRIV = 1 << 20;
  static final int CAP_CACHE_SYMLINKS = 1 << 23;

  /** What one mount needs. */
  record Options(String fsName, Path mountpoint, CacheSettings cache, int maxThreads,
      Duration unmountTimeout, int readAheadKib) {

    /** libfuse's -o list: see docs/ARCHITECTURE.md, "The FUSE front ends". */
    String mountOptions() {
      return String.join(",",
          "fsname=" + escape("etcfs:" + fsName),
          "subtype=" + TYPE,
          "default_permissions",
          "allow_other",
          "auto_unmount");
    }

    /** libfuse's option parser splits at commas; a backslash escapes one. */
    static String escape(String value) {
      return value.replace("\\", "\\\\").replace(",", "\\,");
    }
  }

  private final Libfuse3 lib;
  private final Path mountpoint;
  private final Requests requests;
  private final LowLevelOps ops;
  private final Callbacks.Table table;
  private final Duration unmountTimeout;
  /** How long an unmount waits for releases in flight to commit. */
  private static final Duration RELEASES_BOUND = Duration.ofSeconds(30);
  private volatile long session;
  private final Vfs vfs;
  private KernelNotifier notifier;
  private FuseLoop loop;

  private Fuse3Session(Libfuse3 lib, Vfs vfs, Path mountpoint, Options options) {
    this.lib = lib;
    this.vfs = vfs;
    this.mountpoint = mountpoint;
    this.unmountTimeout = options.unmountTimeout();
    this.requests = new Requests(lib, mountpoint.toString());
    this.ops = new LowLevelOps(vfs, lib, requests, options.cache());
    this.table = new Callbacks.Table();
    boolean readdirplus = options.cache().readdirplus();
    boolean pageCache = options.cache().pageCache();
    ops.register(table, (userdata, conn) -> init(conn, readdirplus, pageCache));
  }

  /** Mounts, or fails with one line saying why. Call with the bundle's context loader. */
  static Fuse3Session mount(Libfuse3 lib, Vfs vfs, Options options) {
    Path mountpoint = Preflight.check(options.mountpoint());
    Fuse3Session s = new Fuse3Session(lib, vfs, mountpoint, options);
    s.start(options);
    return s;
  }

  /**
   * How many background requests (releases, read-ahead, asynchronous reads) the kernel keeps in
   * flight to this node, where its default is 12. A release commits the file it ends, which
   * takes an etcd round trip unless the file's queued create carries it; with 12 in flight the
   * releases of 8 writers backed up in the kernel for seconds: they then came too late to be
   * carried, files stayed open here into their unlink (which could not be queued then), and reads
   * waited behind them. Measured with 8 processes creating, reading and unlinking 2,000 files:
   * 12 → 64 took unlinks from 283 to 2,411/s and the node's transactions from 4,774 to 766
   * (128: 2,500/s, 633). Each request is served on a thread of its own, so more in flight costs
   * no FUSE thread a wait. {@code -Detcfs.fuse.maxBackground} in ETCFS_NODE_JAVA_OPTS sets it.
   */
  static final int MAX_BACKGROUND = Integer.getInteger("etcfs.fuse.maxBackground", 64);

  /**
   * The connection's settings, asked once when the kernel first talks to libfuse: cluster
   * locks, O_TRUNC handed to open, writes of up to 1 MiB, nanosecond times, and no write-back
   * cache (a write reaches etcfs before it returns, so another node's read can recall it).
   */
  private static void init(long conn, boolean readdirplus, boolean pageCache) {
    int capable = Mem.IO.getInt(conn + Mem.CONN_CAPABLE);
    int want = Mem.IO.getInt(conn + Mem.CONN_WANT);
    want |= capable & (CAP_POSIX_LOCKS | CAP_FLOCK_LOCKS | CAP_ATOMIC_O_TRUNC | CAP_ASYNC_READ
        | CAP_PARALLEL_DIROPS);
    want &= ~CAP_WRITEBACK_CACHE;
    if (pageCache) {
      // read() asks for the attributes once they were dropped, and so meets the grant check
      want |= capable & CAP_AUTO_INVAL_DATA;
      // A symlink's target never changes (POSIX has no call for it; a new target is a new
      // inode, and inode numbers are not reused), so the kernel may keep it without a lock.
      want |= capable & CAP_CACHE_SYMLINKS;
    }
    if (readdirplus) {
      want |= capable & (CAP_READDIRPLUS | CAP_READDIRPLUS_AUTO);
    } else {
      want &= ~(CAP_READDIRPLUS | CAP_READDIRPLUS_AUTO);
    }
    Mem.IO.putInt(conn + Mem.CONN_WANT, want);
    Mem.IO.putInt(conn + Mem.CONN_MAX_WRITE, Requests.MAX_POOLED);
    Mem.IO.putInt(conn + Mem.CONN_TIME_GRAN, 1);
    Mem.IO.putInt(conn + Mem.CONN_MAX_BACKGROUND, MAX_BACKGROUND);
    Mem.IO.putInt(conn + Mem.CONN_CONGESTION_THRESHOLD, MAX_BACKGROUND * 3 / 4);
  }

  private void start(Options options) {
    long args = arguments(List.of(TYPE, "-o", options.mountOptions()));
    long se = lib.fuse_session_new(args, table.address, table.size(), 0);
    if (se == 0) {
      throw refused("libfuse 3 refused the session (its reason is on the node's stderr)");
    }
    if (lib.fuse_session_mount(se, mountpoint.toString()) != 0) {
      lib.fuse_session_destroy(se);
      throw refused("libfuse 3 could not mount (its reason is on the node's stderr)");
    }
    session = se;
    afterInit = options.cache().pageCache()
        ? ReadAheadWindow.applier(mountpoint, options.readAheadKib()) : null;
    notifier = new KernelNotifier(lib, se);
    ops.setNotifier(notifier);
    vfs.setKernelCache(notifier);
    int threads = options.maxThreads();
    loop = new FuseLoop(mountpoint, FS_TYPE, "etcfs-fuse3 loop " + mountpoint,
        () -> runLoop(se, threads));
    if (!isMounted()) {
      close();
      throw refused("the mount is not in /proc/self/mountinfo after fuse_session_mount");
    }
    LOG.log(Level.INFO, "etcfs mounted at {0} (libfuse 3 low-level)", mountpoint);
  }

  /** struct fuse_buf: 40 bytes in 3.14, 48 in 3.17; zeroed room for any of them. */
  private static final int FUSE_BUF_ROOM = 128;
  private static final int FUSE_BUF_MEM = 16;

  /**
   * libfuse's loop on {@code threads} Java threads, each reading requests from the device and
   * running their callbacks; returns when the session ends (unmount), with the first error.
   *
   * <p>Why not libfuse's own multi-threaded loop: its threads are native, and jffi attaches such
   * a thread to the JVM for each callback and detaches it after, so every request paid for a new
   * {@code java.lang.Thread}, its thread-locals (this front end's 132 KiB of reply buffers,
   * allocated and zeroed again) and the detach — measured with perf, about two thirds of the CPU
   * a cold {@code git status} cost the node. A callback on a Java thread finds it attached.
   * A fixed set is enough: no callback waits (a request that would is handed to a worker, see
   * {@link Requests}), so a thread is back at the device within microseconds, and idle ones
   * cost only their buffers.
   */
  /** Run once, after the first request (INIT) was answered; null once run or if none. */
  private volatile Runnable afterInit;

  private int runLoop(long se, int threads) {
    AtomicInteger error = new AtomicInteger();
    List<Thread> others = new ArrayList<>();
    for (int i = 2; i <= threads; i++) {
      Thread t = new Thread(() -> readRequests(se, error),
          Thread.currentThread().getName() + " #" + i);
      t.setDaemon(true);
      t.start();
      others.add(t);
    }
    readRequests(se, error);
    for (Thread t : others) {
      // every reader gets ENODEV from the device once it is unmounted or aborted
      boolean interrupted = false;
      while (t.isAlive()) {
        try {
          t.join();
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
    return error.get();
  }

  private void readRequests(long se, AtomicInteger error) {
    long buf = Mem.alloc(FUSE_BUF_ROOM);
    try {
      while (lib.fuse_session_exited(se) == 0) {
        int n = lib.fuse_session_receive_buf(se, buf);
        if (n == -Errno.EINTR) {
          continue;
        }
        if (n <= 0) {
          if (n < 0) {
            error.compareAndSet(0, n);
            LOG.log(Level.WARNING, "reading the FUSE device of {0}: errno {1}", mountpoint, -n);
          }
          lib.fuse_session_exit(se);
          break;
        }
        lib.fuse_session_process_buf(se, buf);
        Runnable r = afterInit;
        if (r != null) {
          // The first request is INIT, and the kernel has applied its reply by now (it does
          // so while the write of that reply runs): what must follow INIT may go.
          afterInit = null;
          r.run();
        }
      }
    } finally {
      long mem = Mem.IO.getLong(buf + FUSE_BUF_MEM);
      if (mem != 0) {
        Mem.IO.freeMemory(mem);
      }
      Mem.IO.freeMemory(buf);
    }
  }

  private IllegalStateException refused(String why) {
    return new IllegalStateException("cannot mount etcfs at " + mountpoint + ": " + why);
  }

  /** struct fuse_args {int argc; char **argv; int allocated;} in memory that is never freed. */
  private static long arguments(List<String> argv) {
    long vector = Mem.alloc(8L * (argv.size() + 1));
    for (int i = 0; i < argv.size(); i++) {
      byte[] bytes = argv.get(i).getBytes(StandardCharsets.UTF_8);
      long s = Mem.alloc(bytes.length + 1);
      Mem.putString(s, bytes);
      Mem.IO.putLong(vector + 8L * i, s);
    }
    long args = Mem.alloc(24);
    Mem.IO.putInt(args, argv.size());
    Mem.IO.putLong(args + 8, vector);
    Mem.IO.putInt(args + 16, 0);
    return args;
  }

  Path mountpoint() {
    return mountpoint;
  }

  boolean isMounted() {
    return loop.isMounted();
  }

  int openFiles() {
    return ops.openFiles();
  }

  /** Unmounts; bounded by the unmount timeout whatever the kernel or the callers do. */
  @Override
  public void close() {
    boolean ended = loop.unmount(unmountTimeout);
    vfs.setKernelCache(null);
    if (notifier != null) {
      notifier.close();
    }
    requests.close();
    // A release in flight commits its file's buffer (close does not wait for that). Bounded:
    // a commit waits at most etcd's request timeout per attempt; past the bound the node goes
    // on stopping, and what was not committed is lost as at a crash (never committed twice).
    if (!requests.awaitIdle(RELEASES_BOUND)) {
      LOG.log(Level.WARNING, "requests still running {0} s after the unmount; stopping anyway",
          RELEASES_BOUND.toSeconds());
    }
    for (OpenFile file : ops.drainFiles()) {
      try {
        file.release();
      } catch (Exception e) {
        LOG.log(Level.WARNING, "release of inode {0} at unmount: {1}", file.ino(), e.toString());
      }
    }
    long se = session;
    // freeing the session under threads still in libfuse's loop would crash the JVM
    if (ended && se != 0) {
      session = 0;
      lib.fuse_session_unmount(se); // closes the device; the mount is gone already
      lib.fuse_session_destroy(se);
    }
    LOG.log(Level.INFO, "etcfs unmounted from {0}", mountpoint);
  }
}

package io.etcfs.fuse.internal;

import io.etcfs.spi.vfs.Attr;
import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.DirEntry;
import io.etcfs.spi.vfs.DirPage;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.OpenFile;
import io.etcfs.spi.vfs.PosixLock;
import io.etcfs.spi.vfs.SetAttr;
import io.etcfs.spi.vfs.StatFs;
import io.etcfs.spi.vfs.Vfs;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

/**
 * A Vfs of inodes in a map, for mounting the front end in tests. One lock for everything; no
 * permission checks (the kernel does them under default_permissions). {@link #failing} makes an
 * operation throw, {@link #calls} counts them.
 */
final class MemoryVfs implements Vfs {
  static final int O_APPEND = 02000;
  static final int O_TRUNC = 01000;
  static final int O_EXCL = 0200;

  private final Map<Long, MemoryNode> nodes = new ConcurrentHashMap<>();
  private final AtomicLong nextIno = new AtomicLong(ROOT + 1);
  final Map<String, Throwable> failing = new ConcurrentHashMap<>();
  final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
  /** Entries per readdir cookie in directories made from now on. */
  volatile int cookieGroup = 1;
  final AtomicInteger largestWrite = new AtomicInteger();
  final AtomicInteger released = new AtomicInteger();
  final List<Integer> openFlags = java.util.Collections.synchronizedList(new ArrayList<>());
  /** Every lock call as the front end made it, in order. */
  final List<LockCall> lockCalls = java.util.Collections.synchronizedList(new ArrayList<>());
  /** What getlk answers. */
  volatile PosixLock getlkAnswer;

  /**
   * One call of getlk, setlk or flock.
   *
   * @param op "getlk", "setlk", "setlkw" or "flock"
   * @param lock the lock asked for (null for flock)
   * @param flockOp the flock operation (0 for the others)
   */
  record LockCall(String op, long ino, long owner, PosixLock lock, int flockOp) {}

  MemoryVfs() {
    nodes.put(ROOT, MemoryNode.directory(ROOT, 0755, Caller.ROOT, null));
  }

  int count(String op) {
    AtomicInteger n = calls.get(op);
    return n == null ? 0 : n.get();
  }

  /** Counts the call and throws what {@link #failing} holds for it. */
  void enter(String op) throws FsException {
    calls.computeIfAbsent(op, k -> new AtomicInteger()).incrementAndGet();
    Throwable failure = failing.get(op);
    if (failure instanceof FsException e) {
      throw e;
    }
    if (failure instanceof RuntimeException e) {
      throw e;
    }
    if (failure instanceof Error e) {
      throw e;
    }
  }

  synchronized MemoryNode node(long ino) throws FsException {
    MemoryNode node = nodes.get(ino);
    if (node == null) {
      throw new FsException(Errno.ESTALE, "no inode " + ino);
    }
    return node;
  }

  private MemoryNode dir(long ino) throws FsException {
    MemoryNode dir = node(ino);
    if (!dir.attr().isDirectory()) {
      throw new FsException(Errno.ENOTDIR, "inode " + ino);
    }
    return dir;
  }

  @Override
  public synchronized Attr resolve(String path, Caller caller) throws FsException {
    enter("resolve");
    long ino = ROOT;
    for (String name : path.split("/")) {
      if (!name.isEmpty()) {
        ino = child(ino, name);
      }
    }
    return node(ino).attr();
  }

  private long child(long dir, String name) throws FsException {
    Long ino = dir(dir).entries.get(name);
    if (ino == null) {
      throw new FsException(Errno.ENOENT, name);
    }
    return ino;
  }

  @Override
  public synchronized Attr getattr(long ino) throws FsException {
    enter("getattr");
    return node(ino).attr();
  }

  @Override
  public synchronized Attr lookup(long dir, String name, Caller caller) throws FsException {
    enter("lookup");
    return node(child(dir, name)).attr();
  }

  private MemoryNode add(long dir, String name, MemoryNode node) throws FsException {
    MemoryNode parent = dir(dir);
    if (parent.entries.containsKey(name)) {
      throw new FsException(Errno.EEXIST, name);
    }
    nodes.put(node.ino, node);
    parent.link(name, node.ino);
    if (node.attr().isDirectory()) {
      parent.nlink++;
    }
    return node;
  }

  @Override
  public synchronized Attr mknod(long dir, String name, int mode, long rdev, Caller caller)
      throws FsException {
    enter("mknod");
    MemoryNode node = MemoryNode.file(nextIno.getAndIncrement(), mode, caller);
    node.rdev = rdev;
    return add(dir, name, node).attr();
  }

  @Override
  public synchronized Attr mkdir(long dir, String name, int mode, Caller caller)
      throws FsException {
    enter("mkdir");
    MemoryNode node = MemoryNode.directory(nextIno.getAndIncrement(), mode, caller, dir);
    node.cookieGroup = cookieGroup;
    return add(dir, name, node).attr();
  }

  @Override
  public synchronized Attr symlink(long dir, String name, String target, Caller caller)
      throws FsException {
    enter("symlink");
    MemoryNode node = MemoryNode.file(nextIno.getAndIncrement(), Attr.S_IFLNK | 0777, caller);
    node.target = target;
    return add(dir, name, node).attr();
  }

  @Override
  public synchronized Attr link(long ino, long dir, String name, Caller caller)
      throws FsException {
    enter("link");
    MemoryNode node = node(ino);
    if (node.attr().isDirectory()) {
      throw new FsException(Errno.EPERM, "hard link to a directory");
    }
    MemoryNode parent = dir(dir);
    if (parent.entries.containsKey(name)) {
      throw new FsException(Errno.EEXIST, name);
    }
    parent.link(name, ino);
    node.nlink++;
    return node.attr();
  }

  @Override
  public synchronized void unlink(long dir, String name, Caller caller) throws FsException {
    enter("unlink");
    MemoryNode node = node(child(dir, name));
    if (node.attr().isDirectory()) {
      throw new FsException(Errno.EISDIR, name);
    }
    dir(dir).unlink(name);
    node.nlink--;
  }

  @Override
  public synchronized void rmdir(long dir, String name, Caller caller) throws FsException {
    enter("rmdir");
    MemoryNode node = dir(child(dir, name));
    if (!node.entries.isEmpty()) {
      throw new FsException(Errno.ENOTEMPTY, name);
    }
    dir(dir).unlink(name);
    dir(dir).nlink--;
    nodes.remove(node.ino);
  }

  @Override
  public synchronized void rename(long fromDir, String from, long toDir, String to, Caller c)
      throws FsException {
    enter("rename");
    long ino = child(fromDir, from);
    Long replaced = dir(toDir).entries.get(to);
    if (replaced != null && replaced == ino) {
      return;
    }
    if (replaced != null) {
      MemoryNode old = node(replaced);
      if (old.attr().isDirectory() && !old.entries.isEmpty()) {
        throw new FsException(Errno.ENOTEMPTY, to);
      }
      dir(toDir).unlink(to);
      old.nlink--;
    }
    dir(fromDir).unlink(from);
    dir(toDir).link(to, ino);
  }

  @Override
  public synchronized String readlink(long ino) throws FsException {
    enter("readlink");
    MemoryNode node = node(ino);
    if (node.target == null) {
      throw new FsException(Errno.EINVAL, "not a symlink");
    }
    return node.target;
  }

  @Override
  public synchronized Attr setattr(long ino, SetAttr changes, Caller caller) throws FsException {
    enter("setattr");
    node(ino).apply(changes);
    return node(ino).attr();
  }

  @Override
  public synchronized DirPage readdir(long dir, long cookie, int max) throws FsException {
    enter("readdir");
    DirPage page = dir(dir).page(cookie, max);
    List<DirEntry> typed = new ArrayList<>();
    for (DirEntry e : page.entries()) {
      typed.add(new DirEntry(e.name(), e.ino(), node(e.ino()).mode & Attr.S_IFMT, e.cookie()));
    }
    return new DirPage(typed, page.more());
  }

  @Override
  public synchronized OpenFile open(long ino, int flags, Caller caller) throws FsException {
    enter("open");
    openFlags.add(flags);
    MemoryNode node = node(ino);
    if ((flags & O_TRUNC) != 0) {
      node.apply(SetAttr.size(0));
    }
    return new File(node, flags);
  }

  @Override
  public synchronized OpenFile create(long dir, String name, int mode, int flags, Caller caller)
      throws FsException {
    enter("create");
    Long existing = dir(dir).entries.get(name);
    if (existing != null) {
      if ((flags & O_EXCL) != 0) {
        throw new FsException(Errno.EEXIST, name);
      }
      return new File(node(existing), flags);
    }
    return new File(add(dir, name, MemoryNode.file(nextIno.getAndIncrement(), mode, caller)),
        flags);
  }

  @Override
  public StatFs statfs() throws FsException {
    enter("statfs");
    return new StatFs(4096, 1 << 20, 1 << 19, 1 << 16, (1 << 16) - nodes.size(), NAME_MAX);
  }

  @Override
  public synchronized byte[] getxattr(long ino, String name) throws FsException {
    enter("getxattr");
    byte[] value = node(ino).xattrs.get(name);
    if (value == null) {
      throw new FsException(Errno.ENODATA, name);
    }
    return value;
  }

  @Override
  public synchronized void setxattr(long ino, String name, byte[] value, int flags, Caller c)
      throws FsException {
    enter("setxattr");
    Map<String, byte[]> xattrs = node(ino).xattrs;
    if (flags == 1 && xattrs.containsKey(name)) {
      throw new FsException(Errno.EEXIST, name);
    }
    if (flags == 2 && !xattrs.containsKey(name)) {
      throw new FsException(Errno.ENODATA, name);
    }
    xattrs.put(name, value.clone());
  }

  @Override
  public synchronized List<String> listxattr(long ino) throws FsException {
    enter("listxattr");
    return List.copyOf(node(ino).xattrs.keySet());
  }

  @Override
  public synchronized void removexattr(long ino, String name, Caller caller) throws FsException {
    enter("removexattr");
    if (node(ino).xattrs.remove(name) == null) {
      throw new FsException(Errno.ENODATA, name);
    }
  }

  /** An open file: reads and writes the node's bytes under the Vfs lock. */
  private final class File implements OpenFile {
    private final MemoryNode node;
    private final int flags;

    File(MemoryNode node, int flags) {
      this.node = node;
      this.flags = flags;
    }

    @Override
    public long ino() {
      return node.ino;
    }

    @Override
    public int read(ByteBuffer dst, long offset) throws FsException {
      enter("read");
      synchronized (MemoryVfs.this) {
        return node.read(dst, offset);
      }
    }

    @Override
    public int write(ByteBuffer src, long offset) throws FsException {
      enter("write");
      largestWrite.accumulateAndGet(src.remaining(), Math::max);
      synchronized (MemoryVfs.this) {
        return node.write(src, (flags & O_APPEND) != 0 ? node.size : offset);
      }
    }

    /** Not offered by this test double (the libfuse 2 front end does not call it). */
    @Override
    public void fallocate(int mode, long offset, long length) throws FsException {
      throw new FsException(Errno.EOPNOTSUPP, "fallocate in the memory Vfs");
    }

    /** The bytes are one array with no holes: the whole file is data. */
    @Override
    public long seek(long offset, boolean hole) throws FsException {
      enter("seek");
      synchronized (MemoryVfs.this) {
        if (offset < 0 || offset >= node.size) {
          throw new FsException(Errno.ENXIO, "seek at " + offset + " of " + node.size);
        }
        return hole ? node.size : offset;
      }
    }

    @Override
    public void flush() throws FsException {
      enter("flush");
    }

    @Override
    public void fsync(boolean dataOnly) throws FsException {
      enter("fsync");
    }

    @Override
    public void release() throws FsException {
      released.incrementAndGet();
      enter("release");
    }
  }

  // Lock calls are not synchronized: a waiting one must not stop the rest of the filesystem.

  @Override
  public PosixLock getlk(long ino, long owner, PosixLock wanted) throws FsException {
    lockCalls.add(new LockCall("getlk", ino, owner, wanted, 0));
    enter("getlk");
    PosixLock answer = getlkAnswer;
    return answer != null ? answer : PosixLock.none(wanted.start(), wanted.end());
  }

  @Override
  public void setlk(long ino, long owner, PosixLock lock, boolean wait,
      BooleanSupplier interrupted) throws FsException {
    lockCalls.add(new LockCall(wait ? "setlkw" : "setlk", ino, owner, lock, 0));
    enter(wait ? "setlkw" : "setlk");
    if (wait) {
      blockWhile(ino, interrupted);
    }
  }

  @Override
  public void flock(long ino, long owner, int op, BooleanSupplier interrupted)
      throws FsException {
    lockCalls.add(new LockCall("flock", ino, owner, null, op));
    enter("flock");
    if ((op & (LOCK_NB | LOCK_UN)) == 0) {
      blockWhile(ino, interrupted);
    }
  }

  /** Inodes whose blocking lock calls wait until their caller is interrupted. */
  final java.util.Set<Long> blocking = ConcurrentHashMap.newKeySet();
  /** Blocking calls that ended because their caller was interrupted. */
  final AtomicInteger interruptedWaits = new AtomicInteger();

  private void blockWhile(long ino, BooleanSupplier interrupted) throws FsException {
    long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(20);
    while (blocking.contains(ino) && System.nanoTime() - deadline < 0) {
      if (interrupted.getAsBoolean()) {
        interruptedWaits.incrementAndGet();
        throw new FsException(Errno.EINTR, "test: the caller was interrupted");
      }
      java.util.concurrent.locks.LockSupport.parkNanos(5_000_000);
    }
    if (blocking.contains(ino)) {
      throw new FsException(Errno.ENOLCK, "test: never interrupted");
    }
  }

  @Override
  public void setKernelCache(io.etcfs.spi.vfs.KernelCache cache) {
    // the libfuse 2 front end caches nothing in the kernel
  }

  @Override
  public long cacheGrant(long ino) {
    return 0; // no inode locks in memory
  }
}

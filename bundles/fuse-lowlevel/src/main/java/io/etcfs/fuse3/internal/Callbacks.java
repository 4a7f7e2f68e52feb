package io.etcfs.fuse3.internal;

import jnr.ffi.Runtime;
import jnr.ffi.annotations.Delegate;

/**
 * The shapes of libfuse 3's low-level callbacks, one jnr-ffi closure type each, and the table of
 * function pointers ({@code struct fuse_lowlevel_ops}, 44 pointers in 3.14) built from them.
 * Arguments that are pointers arrive as addresses ({@code long}), read with {@link Mem}.
 */
final class Callbacks {
  /** Slots of struct fuse_lowlevel_ops, in declaration order (fuse_lowlevel.h, 3.14). */
  static final int INIT = 0;
  static final int DESTROY = 1;
  static final int LOOKUP = 2;
  static final int FORGET = 3;
  static final int GETATTR = 4;
  static final int SETATTR = 5;
  static final int READLINK = 6;
  static final int MKNOD = 7;
  static final int MKDIR = 8;
  static final int UNLINK = 9;
  static final int RMDIR = 10;
  static final int SYMLINK = 11;
  static final int RENAME = 12;
  static final int LINK = 13;
  static final int OPEN = 14;
  static final int READ = 15;
  static final int WRITE = 16;
  static final int FLUSH = 17;
  static final int RELEASE = 18;
  static final int FSYNC = 19;
  static final int OPENDIR = 20;
  static final int READDIR = 21;
  static final int RELEASEDIR = 22;
  static final int FSYNCDIR = 23;
  static final int STATFS = 24;
  static final int SETXATTR = 25;
  static final int GETXATTR = 26;
  static final int LISTXATTR = 27;
  static final int REMOVEXATTR = 28;
  static final int ACCESS = 29;
  static final int CREATE = 30;
  static final int GETLK = 31;
  static final int SETLK = 32;
  static final int BMAP = 33;
  static final int IOCTL = 34;
  static final int POLL = 35;
  static final int WRITE_BUF = 36;
  static final int RETRIEVE_REPLY = 37;
  static final int FORGET_MULTI = 38;
  static final int FLOCK = 39;
  static final int FALLOCATE = 40;
  static final int READDIRPLUS = 41;
  static final int COPY_FILE_RANGE = 42;
  static final int LSEEK = 43;
  static final int SLOTS = 44;

  private Callbacks() {}

  /** init(userdata, conn) and destroy(userdata). */
  public interface Init {
    @Delegate
    void call(long userdata, long conn);
  }

  public interface Destroy {
    @Delegate
    void call(long userdata);
  }

  /** (req, ino): readlink, statfs. */
  public interface ReqIno {
    @Delegate
    void call(long req, long ino);
  }

  /** (req, ino, pointer): lookup/unlink/rmdir/removexattr (a name), getattr/open/... (a fi). */
  public interface ReqInoPtr {
    @Delegate
    void call(long req, long ino, long ptr);
  }

  /** (req, ino, n): forget (nlookup), listxattr (size); forget_multi (count, array). */
  public interface ReqInoLong {
    @Delegate
    void call(long req, long ino, long n);
  }

  public interface Setattr {
    @Delegate
    void call(long req, long ino, long stat, int toSet, long fi);
  }

  public interface Mknod {
    @Delegate
    void call(long req, long parent, long name, int mode, long rdev);
  }

  /** (req, parent, name, mode): mkdir. */
  public interface Mkdir {
    @Delegate
    void call(long req, long parent, long name, int mode);
  }

  public interface Symlink {
    @Delegate
    void call(long req, long link, long parent, long name);
  }

  public interface Rename {
    @Delegate
    void call(long req, long parent, long name, long newParent, long newName, int flags);
  }

  public interface Link {
    @Delegate
    void call(long req, long ino, long newParent, long newName);
  }

  /** (req, ino, size, off, fi): read, readdir, readdirplus. */
  public interface Read {
    @Delegate
    void call(long req, long ino, long size, long off, long fi);
  }

  public interface Write {
    @Delegate
    void call(long req, long ino, long buf, long size, long off, long fi);
  }

  /** (req, ino, int, fi): fsync, fsyncdir (datasync); flock (op) has (req, ino, fi, int). */
  public interface Fsync {
    @Delegate
    void call(long req, long ino, int datasync, long fi);
  }

  public interface Flock {
    @Delegate
    void call(long req, long ino, long fi, int op);
  }

  public interface Setxattr {
    @Delegate
    void call(long req, long ino, long name, long value, long size, int flags);
  }

  public interface Getxattr {
    @Delegate
    void call(long req, long ino, long name, long size);
  }

  public interface Access {
    @Delegate
    void call(long req, long ino, int mask);
  }

  public interface Create {
    @Delegate
    void call(long req, long parent, long name, int mode, long fi);
  }

  public interface Getlk {
    @Delegate
    void call(long req, long ino, long fi, long flock);
  }

  public interface Setlk {
    @Delegate
    void call(long req, long ino, long fi, long flock, int sleep);
  }

  public interface Fallocate {
    @Delegate
    void call(long req, long ino, int mode, long off, long length, long fi);
  }

  public interface CopyFileRange {
    @Delegate
    void call(long req, long inoIn, long offIn, long fiIn, long inoOut, long offOut, long fiOut,
        long len, int flags);
  }

  public interface Lseek {
    @Delegate
    void call(long req, long ino, long off, int whence, long fi);
  }

  /**
   * The native table: each slot holds a closure's function pointer, or NULL (libfuse then
   * answers ENOSYS itself). The closures must stay reachable as long as the table is in use.
   */
  static final class Table {
    private final Runtime runtime = Runtime.getSystemRuntime();
    /** The closures and their native pointers: a collected pointer frees its trampoline. */
    private final Object[] closures = new Object[SLOTS * 2];
    final long address = Mem.alloc(SLOTS * 8L);

    <T> void set(int slot, Class<T> type, T closure) {
      jnr.ffi.Pointer pointer = runtime.getClosureManager().getClosurePointer(type, closure);
      closures[2 * slot] = closure;
      closures[2 * slot + 1] = pointer;
      Mem.IO.putLong(address + slot * 8L, pointer.address());
    }

    long size() {
      return SLOTS * 8L;
    }
  }
}

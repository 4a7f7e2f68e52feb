package io.etcfs.fuse.internal;

import io.etcfs.fuse.common.Handles;
import io.etcfs.fuse.common.ProcGroups;
import io.etcfs.fuse.common.Guard;
import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.OpenFile;
import io.etcfs.spi.vfs.SetAttr;
import io.etcfs.spi.vfs.Vfs;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.List;
import jnr.ffi.Pointer;
import jnr.ffi.Struct;
import ru.serce.jnrfuse.FuseFillDir;
import ru.serce.jnrfuse.FuseStubFS;
import ru.serce.jnrfuse.struct.FileStat;
import ru.serce.jnrfuse.struct.Flock;
import ru.serce.jnrfuse.struct.FuseContext;
import ru.serce.jnrfuse.struct.FuseFileInfo;
import ru.serce.jnrfuse.struct.Statvfs;
import ru.serce.jnrfuse.struct.Timespec;

/**
 * The libfuse 2 high-level callbacks, each run through {@link Guard} and delegated to the part
 * that implements it. What is not overridden here stays unregistered with libfuse, which answers
 * ENOSYS itself: bmap, ioctl, poll, fallocate. lock and flock are registered, so the kernel hands
 * every fcntl and flock lock to the cluster (and libfuse calls lock(F_SETLK, F_UNLCK) on every
 * close, which costs nothing for an owner that holds no lock).
 */
final class EtcfsFuse extends FuseStubFS {
  private static final Logger LOG = System.getLogger(EtcfsFuse.class.getName());
  static final String TYPE = "etcfs";

  private final Vfs vfs;
  private final Guard guard = new Guard();
  private final Handles handles = new Handles();
  private final Namespace names;
  private final FileIo files;
  private final Directories dirs;
  private final XattrCalls xattrs;
  private final Locks locks;

  EtcfsFuse(Vfs vfs, boolean directIo, boolean zeroCopy) {
    this.vfs = vfs;
    this.names = new Namespace(vfs);
    this.locks = new Locks(vfs, handles, Interrupts.load());
    this.files = new FileIo(vfs, handles, new IoBuffers(zeroCopy), directIo, locks);
    this.dirs = new Directories(vfs, handles);
    this.xattrs = new XattrCalls(vfs);
    RawFlags.setOperationFlags(fuseOperations, RawFlags.NULLPATH_OK | RawFlags.UTIME_OMIT_OK);
  }

  /** The subtype: mounts show as type {@code fuse.etcfs}. */
  @Override
  protected String getFSName() {
    return TYPE;
  }

  /** Runs libfuse's main loop in the calling thread until the mount goes away. */
  int runMain(List<String> options) {
    String[] argv = new String[options.size() + 1];
    argv[0] = getFSName();
    for (int i = 0; i < options.size(); i++) {
      argv[i + 1] = options.get(i);
    }
    return libFuse.fuse_main_real(
        argv.length, argv, fuseOperations, Struct.size(fuseOperations), null);
  }

  /**
   * Ends service: later calls get EIO, and files the kernel never closed (the mount was torn
   * down under them) are released.
   */
  void releaseAll() {
    guard.close();
    for (OpenFile file : handles.drainFiles()) {
      try {
        file.release();
      } catch (Exception e) {
        LOG.log(Level.WARNING, "release of inode {0} at unmount: {1}", file.ino(), e.toString());
      }
    }
  }

  int openFiles() {
    return handles.openFiles();
  }

  /** Files unlinked while open here that libfuse still serves by a hidden name. */
  int hiddenFiles() {
    return names.hiddenFiles();
  }

  /** The request's credentials; its supplementary groups are read only if a check needs them. */
  private Caller caller() {
    FuseContext context = getContext();
    int pid = (int) context.pid.longValue();
    return Caller.withGroupsFrom((int) context.uid.longValue(), (int) context.gid.longValue(),
        pid, () -> ProcGroups.of(pid));
  }

  // ---- attributes and names

  @Override
  public int getattr(String path, FileStat stat) {
    return guard.run("getattr", path, () -> {
      StatStructs.fill(names.resolve(path, caller()), stat);
      return 0;
    });
  }

  @Override
  public int fgetattr(String path, FileStat stat, FuseFileInfo fi) {
    return guard.run("fgetattr", path, () -> files.getattr(fi, stat));
  }

  @Override
  public int access(String path, int mask) {
    // default_permissions: the kernel checked the permission bits; only existence is left
    return guard.run("access", path, () -> {
      names.resolve(path, caller());
      return 0;
    });
  }

  @Override
  public int readlink(String path, Pointer buf, long size) {
    return guard.run("readlink", path, () -> {
      names.readlink(path, buf, size, caller());
      return 0;
    });
  }

  @Override
  public int mknod(String path, long mode, long rdev) {
    return guard.run("mknod", path, () -> {
      names.mknod(path, (int) mode, rdev, caller());
      return 0;
    });
  }

  @Override
  public int mkdir(String path, long mode) {
    return guard.run("mkdir", path, () -> {
      names.mkdir(path, (int) mode, caller());
      return 0;
    });
  }

  @Override
  public int unlink(String path) {
    return guard.run("unlink", path, () -> {
      names.unlink(path, caller());
      return 0;
    });
  }

  @Override
  public int rmdir(String path) {
    return guard.run("rmdir", path, () -> {
      names.rmdir(path, caller());
      return 0;
    });
  }

  @Override
  public int symlink(String target, String path) {
    return guard.run("symlink", path, () -> {
      names.symlink(target, path, caller());
      return 0;
    });
  }

  @Override
  public int rename(String from, String to) {
    return guard.run("rename", from, () -> {
      names.rename(from, to, caller());
      return 0;
    });
  }

  @Override
  public int link(String existing, String path) {
    return guard.run("link", path, () -> {
      names.link(existing, path, caller());
      return 0;
    });
  }

  @Override
  public int chmod(String path, long mode) {
    return setattr("chmod", path, SetAttr.mode((int) mode));
  }

  @Override
  public int chown(String path, long uid, long gid) {
    return setattr("chown", path, Namespace.chown(uid, gid));
  }

  @Override
  public int truncate(String path, long size) {
    return setattr("truncate", path, SetAttr.size(size));
  }

  @Override
  public int utimens(String path, Timespec[] times) {
    return guard.run("utimens", path, () -> {
      names.setattr(path, Namespace.utimens(times[0], times[1]), caller());
      return 0;
    });
  }

  private int setattr(String op, String path, SetAttr changes) {
    return guard.run(op, path, () -> {
      names.setattr(path, changes, caller());
      return 0;
    });
  }

  @Override
  public int statfs(String path, Statvfs stat) {
    return guard.run("statfs", path, () -> {
      StatStructs.fill(vfs.statfs(), stat);
      return 0;
    });
  }

  // ---- open files (path may be null: nullpath_ok)

  @Override
  public int open(String path, FuseFileInfo fi) {
    return guard.run("open", path, () -> {
      Caller caller = caller();
      return files.open(names.resolve(path, caller), fi, caller);
    });
  }

  @Override
  public int create(String path, long mode, FuseFileInfo fi) {
    return guard.run("create", path, () -> {
      Caller caller = caller();
      return files.create(names.parent(path, caller), Paths.name(path), (int) mode, fi, caller);
    });
  }

  @Override
  public int read(String path, Pointer buf, long size, long offset, FuseFileInfo fi) {
    return guard.run("read", path, () -> files.read(fi, buf, size, offset));
  }

  @Override
  public int write(String path, Pointer buf, long size, long offset, FuseFileInfo fi) {
    return guard.run("write", path, () -> files.write(fi, buf, size, offset));
  }

  @Override
  public int flush(String path, FuseFileInfo fi) {
    return guard.run("flush", path, () -> files.flush(fi));
  }

  @Override
  public int fsync(String path, int isdatasync, FuseFileInfo fi) {
    return guard.run("fsync", path, () -> files.fsync(fi, isdatasync != 0));
  }

  @Override
  public int release(String path, FuseFileInfo fi) {
    return guard.run("release", path, () -> files.release(fi));
  }

  @Override
  public int ftruncate(String path, long size, FuseFileInfo fi) {
    return guard.run("ftruncate", path, () -> files.truncate(fi, size, caller()));
  }

  /**
   * fcntl F_GETLK / F_SETLK / F_SETLKW. F_SETLKW waits until granted or until the caller gets a
   * signal (seen through fuse_interrupted()), at most the core's bound.
   */
  @Override
  public int lock(String path, FuseFileInfo fi, int cmd, Flock flock) {
    return guard.run("lock", path, () -> locks.lock(fi, cmd, flock));
  }

  /** flock(2); libfuse passes LOCK_NB or-ed in for a request that must not wait. */
  @Override
  public int flock(String path, FuseFileInfo fi, int op) {
    return guard.run("flock", path, () -> locks.flock(fi, op));
  }

  // ---- directories

  @Override
  public int opendir(String path, FuseFileInfo fi) {
    return guard.run("opendir", path, () -> {
      Caller caller = caller();
      long parent = "/".equals(path) ? Vfs.ROOT : names.parent(path, caller);
      fi.fh.set(dirs.open(names.resolve(path, caller), parent));
      return 0;
    });
  }

  @Override
  public int readdir(String path, Pointer buf, FuseFillDir filler, long offset, FuseFileInfo fi) {
    return guard.run("readdir", path, () -> dirs.read(fi.fh.get(), buf, filler, offset));
  }

  @Override
  public int releasedir(String path, FuseFileInfo fi) {
    return guard.run("releasedir", path, () -> {
      dirs.release(fi.fh.get());
      return 0;
    });
  }

  /** Directory changes are committed to etcd when they are made: nothing is left to sync. */
  @Override
  public int fsyncdir(String path, FuseFileInfo fi) {
    return 0;
  }

  // ---- extended attributes

  @Override
  public int getxattr(String path, String name, Pointer value, long size) {
    return guard.run("getxattr", path,
        () -> xattrs.get(names.resolve(path, caller()).ino(), name, value, size));
  }

  @Override
  public int listxattr(String path, Pointer list, long size) {
    return guard.run("listxattr", path,
        () -> xattrs.list(names.resolve(path, caller()).ino(), list, size));
  }

  @Override
  public int setxattr(String path, String name, Pointer value, long size, int flags) {
    return guard.run("setxattr", path, () -> {
      Caller caller = caller();
      xattrs.set(names.resolve(path, caller).ino(), name, value, size, flags, caller);
      return 0;
    });
  }

  @Override
  public int removexattr(String path, String name) {
    return guard.run("removexattr", path, () -> {
      Caller caller = caller();
      xattrs.remove(names.resolve(path, caller).ino(), name, caller);
      return 0;
    });
  }
}

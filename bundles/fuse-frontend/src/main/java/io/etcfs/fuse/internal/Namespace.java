package io.etcfs.fuse.internal;

import io.etcfs.spi.vfs.Attr;
import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.SetAttr;
import io.etcfs.spi.vfs.Vfs;
import java.nio.charset.StandardCharsets;
import jnr.ffi.Pointer;
import ru.serce.jnrfuse.struct.Timespec;

/**
 * The calls that name files by path. libfuse's high-level API gives whole paths: a path is
 * resolved with {@link Vfs#resolve}, and a call that creates or removes a name resolves the
 * parent and hands the Vfs the last component.
 */
final class Namespace {
  /** utimensat(2)'s special tv_nsec values. */
  static final long UTIME_NOW = (1L << 30) - 1;
  static final long UTIME_OMIT = (1L << 30) - 2;
  /** chown(2)'s "leave unchanged", as the unsigned 32-bit id libfuse passes. */
  private static final long NO_ID = 0xFFFF_FFFFL;

  private final Vfs vfs;
  private final HiddenNames hidden = new HiddenNames();

  Namespace(Vfs vfs) {
    this.vfs = vfs;
  }

  Attr resolve(String path, Caller caller) throws FsException {
    if (path == null) {
      throw new FsException(Errno.ENOENT, "no path (the file was removed)");
    }
    // every call resolves paths (dozens per create): only look while some file is hidden
    if (!hidden.isEmpty() && !"/".equals(path) && HiddenNames.isHidden(Paths.name(path))) {
      Long ino = hidden.get(parent(path, caller), Paths.name(path));
      if (ino != null) {
        return vfs.getattr(ino); // unlinked, still open here: nlink 0
      }
    }
    return vfs.resolve(path, caller);
  }

  long parent(String path, Caller caller) throws FsException {
    return resolve(Paths.parent(path), caller).ino();
  }

  void mknod(String path, int mode, long rdev, Caller caller) throws FsException {
    vfs.mknod(parent(path, caller), Paths.name(path), mode, rdev, caller);
  }

  void mkdir(String path, int mode, Caller caller) throws FsException {
    vfs.mkdir(parent(path, caller), Paths.name(path), mode, caller);
  }

  void unlink(String path, Caller caller) throws FsException {
    long dir = parent(path, caller);
    String name = Paths.name(path);
    if (HiddenNames.isHidden(name) && hidden.remove(dir, name)) {
      return; // libfuse's unlink at the last close of a file unlinked before: done then
    }
    vfs.unlink(dir, name, caller);
  }

  void rmdir(String path, Caller caller) throws FsException {
    vfs.rmdir(parent(path, caller), Paths.name(path), caller);
  }

  void symlink(String target, String path, Caller caller) throws FsException {
    vfs.symlink(parent(path, caller), Paths.name(path), target, caller);
  }

  void rename(String from, String to, Caller caller) throws FsException {
    long fromDir = parent(from, caller);
    long toDir = parent(to, caller);
    if (HiddenNames.isHidden(Paths.name(to)) && fromDir == toDir) {
      hide(fromDir, Paths.name(from), Paths.name(to), caller);
      return;
    }
    vfs.rename(fromDir, Paths.name(from), toDir, Paths.name(to), caller);
  }

  /** libfuse hides a file unlinked (or replaced) while open: that is the real unlink. */
  private void hide(long dir, String name, String hiddenName, Caller caller) throws FsException {
    long ino = vfs.lookup(dir, name, caller).ino();
    vfs.unlink(dir, name, caller);
    hidden.put(dir, hiddenName, ino);
  }

  /** Files unlinked while open that libfuse still serves by a hidden name (for tests). */
  int hiddenFiles() {
    return hidden.size();
  }

  void link(String existing, String path, Caller caller) throws FsException {
    long ino = resolve(existing, caller).ino();
    vfs.link(ino, parent(path, caller), Paths.name(path), caller);
  }

  /** readlink(2) into a buffer of {@code size} bytes, NUL-terminated and truncated to fit. */
  void readlink(String path, Pointer buf, long size, Caller caller) throws FsException {
    if (size <= 0) {
      throw new FsException(Errno.EINVAL, "readlink into an empty buffer");
    }
    byte[] target = vfs.readlink(resolve(path, caller).ino()).getBytes(StandardCharsets.UTF_8);
    int length = (int) Math.min(target.length, size - 1);
    buf.put(0, target, 0, length);
    buf.putByte(length, (byte) 0);
  }

  void setattr(String path, SetAttr changes, Caller caller) throws FsException {
    vfs.setattr(resolve(path, caller).ino(), changes, caller);
  }

  static SetAttr chown(long uid, long gid) {
    return SetAttr.owner(uid == NO_ID ? null : (int) uid, gid == NO_ID ? null : (int) gid);
  }

  static SetAttr utimens(Timespec atime, Timespec mtime) {
    return SetAttr.times(time(atime), time(mtime));
  }

  private static Long time(Timespec spec) {
    long nsec = spec.tv_nsec.longValue();
    if (nsec == UTIME_OMIT) {
      return null;
    }
    if (nsec == UTIME_NOW) {
      return SetAttr.NOW;
    }
    return spec.tv_sec.get() * 1_000_000_000L + nsec;
  }
}

package io.etcfs.fuse.internal;

import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.Vfs;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import jnr.ffi.Pointer;

/**
 * Extended attributes. getxattr and listxattr follow the syscalls' size protocol: size 0 asks
 * for the length, a buffer too small is ERANGE. {@code security.capability}, asked before every
 * write, goes to the Vfs like any other name: the core answers it from memory.
 */
final class XattrCalls {
  /** XATTR_SIZE_MAX: the kernel never passes a larger value. */
  static final int MAX_VALUE = 64 * 1024;
  /** Not in {@link Errno} (yet): "argument list too long", setxattr's answer to a huge value. */

  private final Vfs vfs;

  XattrCalls(Vfs vfs) {
    this.vfs = vfs;
  }

  int get(long ino, String name, Pointer value, long size) throws FsException {
    return answer(vfs.getxattr(ino, name), value, size);
  }

  int list(long ino, Pointer list, long size) throws FsException {
    ByteArrayOutputStream names = new ByteArrayOutputStream();
    for (String name : vfs.listxattr(ino)) {
      names.writeBytes(name.getBytes(StandardCharsets.UTF_8));
      names.write(0);
    }
    return answer(names.toByteArray(), list, size);
  }

  void set(long ino, String name, Pointer value, long size, int flags, Caller caller)
      throws FsException {
    if (size < 0 || size > MAX_VALUE) {
      throw new FsException(Errno.E2BIG, "xattr value of " + size + " bytes");
    }
    byte[] bytes = new byte[(int) size];
    if (size > 0) {
      value.get(0, bytes, 0, bytes.length);
    }
    vfs.setxattr(ino, name, bytes, flags, caller);
  }

  void remove(long ino, String name, Caller caller) throws FsException {
    vfs.removexattr(ino, name, caller);
  }

  private static int answer(byte[] bytes, Pointer buffer, long size) throws FsException {
    if (size == 0) {
      return bytes.length;
    }
    if (size < bytes.length) {
      throw new FsException(Errno.ERANGE, bytes.length + " bytes do not fit in " + size);
    }
    buffer.put(0, bytes, 0, bytes.length);
    return bytes.length;
  }
}

package io.etcfs.fuse.internal;

import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;

/** Splits the absolute paths libfuse's high-level API hands over into parent path and name. */
final class Paths {
  private Paths() {}

  static String parent(String path) throws FsException {
    int slash = lastSlash(path);
    return slash == 0 ? "/" : path.substring(0, slash);
  }

  static String name(String path) throws FsException {
    String name = path.substring(lastSlash(path) + 1);
    if (name.isEmpty()) {
      throw new FsException(Errno.EINVAL, "no name in path " + path);
    }
    return name;
  }

  private static int lastSlash(String path) throws FsException {
    if (path == null || path.isEmpty() || path.charAt(0) != '/') {
      // nullpath_ok hands null only to calls that take a file handle; a name op never gets one
      throw new FsException(Errno.EINVAL, "not an absolute path: " + path);
    }
    return path.lastIndexOf('/');
  }
}

package io.etcfs.fuse.common;

import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.OpenFile;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The FUSE file handles ({@code fuse_file_info.fh}) of open files and open directories. One
 * number space for both, never reused within a mount, so a stale or mixed-up handle is EBADF and
 * never someone else's file.
 */
public final class Handles {
  private final AtomicLong next = new AtomicLong(1);
  private final Map<Long, OpenFile> files = new ConcurrentHashMap<>();
  private final Map<Long, DirHandle> dirs = new ConcurrentHashMap<>();

  public long add(OpenFile file) {
    long fh = next.getAndIncrement();
    files.put(fh, file);
    return fh;
  }

  public long add(DirHandle dir) {
    long fh = next.getAndIncrement();
    dirs.put(fh, dir);
    return fh;
  }

  public OpenFile file(long fh) throws FsException {
    OpenFile file = files.get(fh);
    if (file == null) {
      throw new FsException(Errno.EBADF, "no open file with handle " + fh);
    }
    return file;
  }

  public OpenFile removeFile(long fh) throws FsException {
    OpenFile file = files.remove(fh);
    if (file == null) {
      throw new FsException(Errno.EBADF, "no open file with handle " + fh);
    }
    return file;
  }

  public DirHandle dir(long fh) throws FsException {
    DirHandle dir = dirs.get(fh);
    if (dir == null) {
      throw new FsException(Errno.EBADF, "no open directory with handle " + fh);
    }
    return dir;
  }

  public void removeDir(long fh) {
    dirs.remove(fh);
  }

  public int openFiles() {
    return files.size();
  }

  /** Takes every file still open, for release once the kernel can no longer close them. */
  public List<OpenFile> drainFiles() {
    List<OpenFile> left = new ArrayList<>();
    for (Long fh : List.copyOf(files.keySet())) {
      OpenFile file = files.remove(fh);
      if (file != null) {
        left.add(file);
      }
    }
    dirs.clear();
    return left;
  }
}

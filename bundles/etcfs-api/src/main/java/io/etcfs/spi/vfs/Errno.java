package io.etcfs.spi.vfs;

/** The Linux errno values etcfs returns (x86-64 and arm64 agree on all of these). */
public final class Errno {
  public static final int EPERM = 1;
  public static final int ENOENT = 2;
  public static final int EINTR = 4;
  public static final int EIO = 5;
  public static final int ENXIO = 6;
  public static final int E2BIG = 7;
  public static final int EBADF = 9;
  public static final int EAGAIN = 11;
  public static final int ENOMEM = 12;
  public static final int EACCES = 13;
  public static final int EBUSY = 16;
  public static final int EEXIST = 17;
  public static final int EXDEV = 18;
  public static final int ENOTDIR = 20;
  public static final int EISDIR = 21;
  public static final int EINVAL = 22;
  public static final int EFBIG = 27;
  public static final int ENOSPC = 28;
  public static final int EROFS = 30;
  public static final int EMLINK = 31;
  public static final int ERANGE = 34;
  public static final int EDEADLK = 35;
  public static final int ENAMETOOLONG = 36;
  public static final int ENOLCK = 37;
  public static final int ENOSYS = 38;
  public static final int ENOTEMPTY = 39;
  public static final int ELOOP = 40;
  public static final int ENODATA = 61;
  public static final int EOVERFLOW = 75;
  public static final int EOPNOTSUPP = 95;
  public static final int ETIMEDOUT = 110;
  public static final int ESTALE = 116;

  private Errno() {}
}

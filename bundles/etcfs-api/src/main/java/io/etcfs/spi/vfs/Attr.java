package io.etcfs.spi.vfs;

/**
 * An inode's attributes as {@code stat} reports them.
 *
 * @param ino the inode number
 * @param mode file type and permission bits ({@code S_IFREG | 0644})
 * @param nlink the link count (a directory counts "." and each subdirectory's "..")
 * @param uid the owner
 * @param gid the group
 * @param rdev the device number of a device node
 * @param size the size in bytes (for a symlink: the target's length)
 * @param blocks 512-byte units allocated on the device
 * @param atimeNs last access, nanoseconds since the epoch
 * @param mtimeNs last modification
 * @param ctimeNs last status change
 */
public record Attr(
    long ino,
    int mode,
    int nlink,
    int uid,
    int gid,
    long rdev,
    long size,
    long blocks,
    long atimeNs,
    long mtimeNs,
    long ctimeNs) {

  public static final int S_IFMT = 0170000;
  public static final int S_IFSOCK = 0140000;
  public static final int S_IFLNK = 0120000;
  public static final int S_IFREG = 0100000;
  public static final int S_IFBLK = 0060000;
  public static final int S_IFDIR = 0040000;
  public static final int S_IFCHR = 0020000;
  public static final int S_IFIFO = 0010000;
  public static final int S_ISUID = 04000;
  public static final int S_ISGID = 02000;
  public static final int S_ISVTX = 01000;

  public boolean isDirectory() {
    return (mode & S_IFMT) == S_IFDIR;
  }

  public boolean isRegular() {
    return (mode & S_IFMT) == S_IFREG;
  }

  public boolean isSymlink() {
    return (mode & S_IFMT) == S_IFLNK;
  }
}

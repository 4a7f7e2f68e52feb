package io.etcfs.core.fs.meta;

import io.etcfs.spi.vfs.Attr;

/**
 * An inode as stored at {@code i/<ino>}.
 *
 * @param ino the inode number
 * @param mode type and permission bits
 * @param uid owner
 * @param gid group
 * @param nlink link count (directories: 2 + subdirectories)
 * @param size bytes (symlinks: the target's length in bytes)
 * @param rdev device number of a device node
 * @param blocks device blocks the extent map references, kept here so stat needs no extent read
 * @param parent a directory's parent (its ".."), 0 for other types: a directory has one parent
 * @param atimeNs access time
 * @param mtimeNs modification time
 * @param ctimeNs status change time
 * @param target a symlink's target, null otherwise
 */
public record Inode(
    long ino, int mode, int uid, int gid, int nlink, long size, long rdev, long blocks,
    long parent, long atimeNs, long mtimeNs, long ctimeNs, String target) {

  /** The root directory a format creates. */
  public static Inode root(long nowNs) {
    return new Inode(1, Attr.S_IFDIR | 0755, 0, 0, 2, 0, 0, 0, 1, nowNs, nowNs, nowNs, null);
  }

  public int type() {
    return mode & Attr.S_IFMT;
  }

  public boolean isDir() {
    return type() == Attr.S_IFDIR;
  }

  public boolean isRegular() {
    return type() == Attr.S_IFREG;
  }

  public Attr toAttr(int blockSize) {
    return new Attr(ino, mode, nlink, uid, gid, rdev, size, blocks * (blockSize / 512),
        atimeNs, mtimeNs, ctimeNs);
  }

  public Inode withMode(int m) {
    return new Inode(ino, m, uid, gid, nlink, size, rdev, blocks, parent, atimeNs, mtimeNs,
        ctimeNs, target);
  }

  public Inode withOwner(int u, int g) {
    return new Inode(ino, mode, u, g, nlink, size, rdev, blocks, parent, atimeNs, mtimeNs,
        ctimeNs, target);
  }

  public Inode withNlink(int n) {
    return new Inode(ino, mode, uid, gid, n, size, rdev, blocks, parent, atimeNs, mtimeNs,
        ctimeNs, target);
  }

  public Inode withSize(long s, long b) {
    return new Inode(ino, mode, uid, gid, nlink, s, rdev, b, parent, atimeNs, mtimeNs,
        ctimeNs, target);
  }

  public Inode withParent(long p) {
    return new Inode(ino, mode, uid, gid, nlink, size, rdev, blocks, p, atimeNs, mtimeNs,
        ctimeNs, target);
  }

  public Inode withTimes(long a, long m, long c) {
    return new Inode(ino, mode, uid, gid, nlink, size, rdev, blocks, parent, a, m, c, target);
  }

  public Inode withCtime(long c) {
    return withTimes(atimeNs, mtimeNs, c);
  }
}

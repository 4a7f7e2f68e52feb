package io.etcfs.spi.vfs;

/**
 * The attribute changes of one {@code setattr} (chmod, chown, truncate, utimens); a null field
 * is left as it is. The times {@code UTIME_NOW} are given as {@link #NOW}.
 *
 * @param mode new permission bits (the file type bits are ignored)
 * @param uid new owner
 * @param gid new group
 * @param size new size (truncate)
 * @param atimeNs new access time, or {@link #NOW}
 * @param mtimeNs new modification time, or {@link #NOW}
 */
public record SetAttr(Integer mode, Integer uid, Integer gid, Long size, Long atimeNs, Long mtimeNs) {
  /** Stands for "the current time" in a time field. */
  public static final long NOW = Long.MIN_VALUE;

  public static SetAttr size(long size) {
    return new SetAttr(null, null, null, size, null, null);
  }

  public static SetAttr mode(int mode) {
    return new SetAttr(mode, null, null, null, null, null);
  }

  public static SetAttr owner(Integer uid, Integer gid) {
    return new SetAttr(null, uid, gid, null, null, null);
  }

  public static SetAttr times(Long atimeNs, Long mtimeNs) {
    return new SetAttr(null, null, null, null, atimeNs, mtimeNs);
  }
}

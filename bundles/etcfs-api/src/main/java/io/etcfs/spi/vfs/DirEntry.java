package io.etcfs.spi.vfs;

/**
 * One directory entry.
 *
 * @param name the entry's name
 * @param ino its inode number
 * @param type its file type bits ({@code mode & S_IFMT})
 * @param cookie where a readdir continues after this entry; stable while the directory changes
 *     (an entry added or removed elsewhere never makes a listing skip or repeat another); at
 *     least {@link #FIRST_COOKIE}, because a front end uses 0, 1 and 2 for the start, "." and
 *     ".."
 */
public record DirEntry(String name, long ino, int type, long cookie) {
  /** The smallest cookie an entry may carry. */
  public static final long FIRST_COOKIE = 3;
}

package io.etcfs.spi.vfs;

/**
 * One directory entry.
 *
 * @param name the entry's name
 * @param ino its inode number
 * @param type its file type bits ({@code mode & S_IFMT})
 * @param cookie where a readdir continues after this entry; stable while the directory changes
 *     (an entry added or removed elsewhere never makes a listing skip or repeat another)
 */
public record DirEntry(String name, long ino, int type, long cookie) {}

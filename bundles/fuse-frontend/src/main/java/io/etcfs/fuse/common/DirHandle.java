package io.etcfs.fuse.common;

import io.etcfs.spi.vfs.DirEntry;
import io.etcfs.spi.vfs.DirPage;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.Vfs;
import java.util.List;

/**
 * An open directory: its inode and the last page the Vfs returned. The kernel asks for a few KiB
 * of entries per readdir call, far fewer than a Vfs page; keeping the page lets the following
 * calls continue from memory instead of asking the Vfs (etcd) again for the same keys.
 */
public final class DirHandle {
  public static final int PAGE = 512;

  public final long ino;
  public final long parentIno;
  /** The offset a readdir call last ended at without getting past a cookie group. */
  public volatile long stuckAt = -1;
  private long startCookie = -1;
  private List<DirEntry> entries = List.of();
  private boolean more;

  public DirHandle(long ino, long parentIno) {
    this.ino = ino;
    this.parentIno = parentIno;
  }

  /** Entries after {@code cookie}, from the kept page where it covers them. */
  public synchronized DirPage after(Vfs vfs, long cookie) throws FsException {
    int from = cookie == startCookie ? 0 : indexAfter(cookie);
    if (from < 0 || (from == entries.size() && more)) {
      DirPage page = vfs.readdir(ino, cookie, PAGE);
      startCookie = cookie;
      entries = page.entries();
      more = page.more();
      return page;
    }
    return new DirPage(entries.subList(from, entries.size()), more);
  }

  /** The index following the last kept entry with this cookie, or -1 if none has it. */
  private int indexAfter(long cookie) {
    for (int i = entries.size() - 1; i >= 0; i--) {
      if (entries.get(i).cookie() == cookie) {
        return i + 1;
      }
    }
    return -1;
  }
}

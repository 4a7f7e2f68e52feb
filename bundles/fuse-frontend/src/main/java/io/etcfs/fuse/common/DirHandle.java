package io.etcfs.fuse.common;

import io.etcfs.spi.vfs.Attr;
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
  private static final long DOT_DONE = 1;
  private static final long DOTDOT_DONE = 2;
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

  /** Where a listing goes, an entry at a time. */
  @FunctionalInterface
  public interface Sink {
    /**
     * Adds an entry whose successor starts at offset {@code next}; false if the buffer is full
     * (the entry was not added).
     */
    boolean add(String name, long ino, int type, long next) throws FsException;
  }

  /**
   * Lists from {@code offset} in offset mode, as both front ends' readdir do: every entry
   * carries the offset to continue after it. Offsets: 0 = from ".", 1 = from "..", 2 = from the
   * first entry (Vfs cookie 0); any other offset is the Vfs cookie of the entry listed last.
   * Entries sharing one cookie (a hash group) all carry the offset from before the group but
   * the last: a listing cut inside a group lists the group again instead of skipping its rest
   * (names sharing a 63-bit hash: practically never). Should a buffer be too small for a whole
   * group, the next call cuts the group rather than loop.
   */
  public void list(Vfs vfs, long offset, Sink sink) throws FsException {
    if (offset == 0 && !sink.add(".", ino, Attr.S_IFDIR, DOT_DONE)) {
      return;
    }
    if (offset <= DOT_DONE && !sink.add("..", parentIno, Attr.S_IFDIR, DOTDOT_DONE)) {
      return;
    }
    long start = Math.max(offset, DOTDOT_DONE);
    boolean cutGroups = stuckAt == start;
    long resume = start;
    while (true) {
      DirPage page = after(vfs, resume == DOTDOT_DONE ? 0 : resume);
      List<DirEntry> entries = page.entries();
      for (int i = 0; i < entries.size(); i++) {
        DirEntry e = entries.get(i);
        boolean groupGoesOn = i + 1 < entries.size() && entries.get(i + 1).cookie() == e.cookie();
        long next = groupGoesOn && !cutGroups ? resume : e.cookie();
        if (!sink.add(e.name(), e.ino(), e.type(), next)) {
          stuckAt = resume == start ? start : -1;
          return;
        }
        resume = next;
      }
      if (!page.more() || entries.isEmpty()) {
        return;
      }
    }
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

package io.etcfs.core.fs;

import io.etcfs.spi.vfs.Attr;
import io.etcfs.spi.vfs.DirEntry;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongPredicate;

/**
 * Which files a reader is likely to open next: the regular files after the one it opens in the
 * directory listing this node has cached, in listing order — the order {@code find}, {@code tar
 * c} and {@code sha256sum *} take them in — then the ones before it, then those of the
 * directories listed after its directory, in the order they were listed (a walk's order: most
 * directories of a source tree hold fewer files than a batch, so without these a walk would pay a
 * round trip per directory). {@link InodeLocks} asks for
 * their shared locks in the round trip the file's own would cost (SPI lock 2.4) and {@link
 * Extents} reads their extent maps in one more, so a sweep over a directory costs two round trips
 * per {@link #BATCH} files instead of four per file. Only a hint: the listing is never read for
 * it, a file removed meanwhile costs a lock held for nothing until it is idle, and a file left
 * out is locked at its own open as before.
 */
final class ReadAhead {
  /** The most files asked for at once: the lock backend's and etcd's per-transaction bound. */
  static final int BATCH = Extents.BATCH;
  /** The most directories listed after a file's that one batch looks into. */
  static final int NEXT_DIRS = 64;

  private final Ctx ctx;
  private final DirReader dirs;

  ReadAhead(Ctx ctx, DirReader dirs) {
    this.ctx = ctx;
    this.dirs = dirs;
  }

  /**
   * {@code ino} first, then up to {@link #BATCH} - 1 regular files of the directory it was last
   * seen in that {@code skip} does not reject, then of the directories listed after it (up to
   * {@link #NEXT_DIRS} of them); just {@code ino} when this node has no cached listing of that
   * directory.
   */
  List<Long> around(long ino, LongPredicate skip) {
    List<Long> out = new ArrayList<>();
    out.add(ino);
    LastNames.Link link = ctx.names.get(ino);
    List<DirEntry> entries = link == null ? null : dirs.cachedListing(link.dir());
    if (entries == null || entries.isEmpty()) {
      return out;
    }
    int at = 0;
    for (int i = 0; i < entries.size(); i++) {
      if (entries.get(i).ino() == ino) {
        at = i + 1;
        break;
      }
    }
    for (int k = 0; k < entries.size() && out.size() < BATCH; k++) {
      add(entries.get((at + k) % entries.size()), ino, skip, out);
    }
    int looked = 0;
    for (long next : dirs.listedAfter(link.dir())) {
      if (out.size() >= BATCH || looked++ == NEXT_DIRS) {
        break;
      }
      List<DirEntry> more = dirs.cachedListing(next);
      for (int k = 0; more != null && k < more.size() && out.size() < BATCH; k++) {
        add(more.get(k), ino, skip, out);
      }
    }
    return out;
  }

  private static void add(DirEntry e, long ino, LongPredicate skip, List<Long> out) {
    // once each: hard links list one file in several places, and a batch names a lock once
    if (e.type() == Attr.S_IFREG && e.ino() != ino && !skip.test(e.ino())
        && !out.contains(e.ino())) {
      out.add(e.ino());
    }
  }
}

package io.etcfs.core.fs;

import io.etcfs.core.fs.meta.Codec;
import io.etcfs.core.fs.meta.Inode;
import io.etcfs.spi.vfs.DirEntry;
import io.etcfs.spi.vfs.DirPage;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.Vfs;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;

/**
 * An inode's path from the root, for people (the shell's lock table): each step up is the name
 * this node last saw the inode under ({@link LastNames}) or, for a directory, the entry of its
 * recorded parent that holds it. Every step is checked against the directory entry as it is
 * now, so a renamed or unlinked name gives no path rather than a wrong one.
 */
final class InodePathFinder {
  private static final int MAX_DEPTH = 4096;
  /** A parent's entries searched for a directory: beyond this the name stays unknown. */
  private static final int MAX_SCANNED = 16_384;
  private static final int PAGE = 512;

  private final Ctx ctx;
  private final Lookups lookups;
  private final DirReader dirs;

  InodePathFinder(Ctx ctx, Lookups lookups, DirReader dirs) {
    this.ctx = ctx;
    this.lookups = lookups;
    this.dirs = dirs;
  }

  /** The path, or empty where a step is unknown or no longer holds. */
  Optional<String> pathOf(long ino) throws FsException {
    if (ino == Vfs.ROOT) {
      return Optional.of("/");
    }
    Deque<String> names = new ArrayDeque<>();
    long at = ino;
    for (int depth = 0; depth < MAX_DEPTH && at != Vfs.ROOT; depth++) {
      Optional<LastNames.Link> up = step(at);
      if (up.isEmpty()) {
        return Optional.empty();
      }
      names.addFirst(up.get().name());
      at = up.get().dir();
    }
    return at == Vfs.ROOT ? Optional.of("/" + String.join("/", names)) : Optional.empty();
  }

  private Optional<LastNames.Link> step(long ino) throws FsException {
    LastNames.Link seen = ctx.names.get(ino);
    if (seen != null && holds(seen, ino)) {
      return Optional.of(seen);
    }
    Optional<Inode> inode = inode(ino);
    if (inode.isEmpty() || !inode.get().isDir()) {
      return Optional.empty();
    }
    Optional<LastNames.Link> found = search(inode.get().parent(), ino);
    found.ifPresent(l -> ctx.names.remember(ino, l.dir(), l.name()));
    return found;
  }

  private boolean holds(LastNames.Link link, long ino) throws FsException {
    Optional<Codec.Dirent> e = lookups.entry(link.dir(), link.name());
    return e.isPresent() && e.get().ino() == ino;
  }

  private Optional<Inode> inode(long ino) throws FsException {
    if (ctx.cache.get(ctx.keys.inode(ino)).isEmpty()) {
      return Optional.empty(); // unknown or purged
    }
    return Optional.of(lookups.inode(ino));
  }

  /** The entry of {@code dir} that holds {@code ino}, read a page at a time. */
  private Optional<LastNames.Link> search(long dir, long ino) throws FsException {
    if (inode(dir).filter(Inode::isDir).isEmpty()) {
      return Optional.empty();
    }
    long cookie = 0;
    int scanned = 0;
    DirPage page;
    do {
      page = dirs.readdir(dir, cookie, PAGE);
      for (DirEntry e : page.entries()) {
        if (e.ino() == ino) {
          return Optional.of(new LastNames.Link(dir, e.name()));
        }
        cookie = e.cookie();
      }
      scanned += page.entries().size();
    } while (page.more() && !page.entries().isEmpty() && scanned < MAX_SCANNED);
    return Optional.empty();
  }
}

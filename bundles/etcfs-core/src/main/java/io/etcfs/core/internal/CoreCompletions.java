package io.etcfs.core.internal;

import io.etcfs.core.fs.EtcFs;
import io.etcfs.spi.shell.Candidate;
import io.etcfs.spi.vfs.Attr;
import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.DirEntry;
import io.etcfs.spi.vfs.DirPage;
import io.etcfs.spi.vfs.FsException;
import java.util.ArrayList;
import java.util.List;

/**
 * The core's completions for the node shell: paths (below this node's mountpoint, or from the
 * filesystem's root, as {@code inode} and {@code extents} take them) and the numbers of the
 * inodes this node is working on. Listed through the filesystem itself, as root, so they work
 * in the node's own shell as well as through {@code etcfs shell}.
 */
final class CoreCompletions {
  /** At most this many candidates: a terminal cannot show more usefully. */
  static final int MAX_CANDIDATES = 200;
  /** A directory is read no further than this many entries for one Tab. */
  static final int MAX_SCANNED = 10_000;
  private static final int PAGE = 500;

  private final EtcFs fs;
  private final String mountpoint;

  CoreCompletions(EtcFs fs, String mountpoint) {
    this.fs = fs;
    this.mountpoint = mountpoint == null ? "" : mountpoint.replaceAll("/+$", "");
  }

  /** The paths {@code word} can grow into; a directory ends in '/' and leaves the word open. */
  List<Candidate> paths(String word) {
    if (!mountpoint.isEmpty()) {
      if (mountpoint.startsWith(word) && word.length() <= mountpoint.length()) {
        return List.of(new Candidate(mountpoint + "/", null, false));
      }
      if (word.startsWith(mountpoint + "/")) {
        return below(mountpoint, word.substring(mountpoint.length()));
      }
    }
    return word.startsWith("/") ? below("", word) : List.of();
  }

  /** The numbers of the inodes open here or locked by this node that start with {@code word}. */
  List<Candidate> inodes(String word) {
    if (!word.chars().allMatch(c -> c >= '0' && c <= '9')) {
      return List.of();
    }
    List<Candidate> out = new ArrayList<>();
    for (long ino : fs.activeInodes()) {
      String value = Long.toString(ino);
      if (value.startsWith(word) && out.size() < MAX_CANDIDATES) {
        out.add(new Candidate(value, fs.pathOf(ino).orElse(null), true));
      }
    }
    return out;
  }

  /**
   * Entries of the directory named by {@code rel} up to its last '/', whose names start with
   * what follows it. {@code base} is put back in front of each (the mountpoint, or nothing).
   */
  private List<Candidate> below(String base, String rel) {
    int slash = rel.lastIndexOf('/');
    String dirPath = rel.substring(0, slash + 1);
    String prefix = rel.substring(slash + 1);
    List<Candidate> out = new ArrayList<>();
    try {
      Attr dir = fs.resolve(dirPath, Caller.ROOT);
      if ((dir.mode() & Attr.S_IFMT) != Attr.S_IFDIR) {
        return List.of();
      }
      long cookie = 0;
      int scanned = 0;
      DirPage page;
      do {
        page = fs.readdir(dir.ino(), cookie, PAGE);
        for (DirEntry e : page.entries()) {
          cookie = e.cookie();
          scanned++;
          if (e.name().startsWith(prefix) && !e.name().equals(".") && !e.name().equals("..")) {
            String value = base + dirPath + e.name();
            out.add(e.type() == Attr.S_IFDIR ? new Candidate(value + "/", null, false)
                : new Candidate(value, null, true));
          }
        }
      } while (page.more() && scanned < MAX_SCANNED && out.size() < MAX_CANDIDATES);
    } catch (FsException e) {
      // A directory that does not exist (yet), or is no longer there: nothing to offer.
      return List.of();
    }
    return out.size() > MAX_CANDIDATES ? out.subList(0, MAX_CANDIDATES) : out;
  }
}

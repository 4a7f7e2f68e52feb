package io.etcfs.core.fs.meta;

import io.etcfs.spi.fs.Keyspace;
import io.etcfs.spi.meta.Keys;

/**
 * The etcd keyspace of one filesystem: everything lives under {@code /etcfs/<name>/}. The full
 * keyspace is written down in docs/ARCHITECTURE.md. Numbers in keys are 16 lowercase hex digits,
 * so that key order is numeric order and range reads page in inode / block / hash order.
 */
public final class FsKeys {
  private final Keyspace space;
  private final String prefix;

  public FsKeys(String fsName) {
    this.space = Keyspace.of(fsName);
    this.prefix = space.root();
  }

  /** The filesystem's keyspace, as every bundle knows it. */
  public Keyspace space() {
    return space;
  }

  public byte[] prefix() {
    return Keys.of(prefix);
  }

  /** The filesystem record: identity, geometry and cluster-wide backend choices. */
  public byte[] record() {
    return space.record();
  }

  public byte[] membersPrefix() {
    return space.bytes(Keyspace.MEMBERS);
  }

  public byte[] member(String node) {
    return space.bytes(Keyspace.MEMBERS + node);
  }

  public byte[] arenasPrefix() {
    return space.bytes(Keyspace.ARENAS);
  }

  /** The next inode number nobody has reserved (decimal text). */
  public byte[] inoNext() {
    return Keys.of(prefix + "ino/next");
  }

  public byte[] inode(long ino) {
    return Keys.of(prefix + "i/" + hex(ino));
  }

  /** Every entry of a directory. */
  public byte[] direntPrefix(long dir) {
    return Keys.of(prefix + "d/" + hex(dir) + "/");
  }

  /** Where the entries whose name hash is {@code hash} or higher start. */
  public byte[] direntFrom(long dir, long hash) {
    return Keys.of(prefix + "d/" + hex(dir) + "/" + hex(hash));
  }

  public byte[] dirent(long dir, long hash, String name) {
    return Keys.of(prefix + "d/" + hex(dir) + "/" + hex(hash) + "/" + name);
  }

  /** A directory's mtime/ctime, written blindly by entry changes (no compare, no conflict). */
  public byte[] dirTimes(long dir) {
    return Keys.of(prefix + "m/" + hex(dir));
  }

  /** The inode's fence (spi.fs {@code InodeFence}). */
  public byte[] inodeFence(long ino) {
    return io.etcfs.spi.fs.InodeFence.key(space, ino);
  }

  /** For a fence's key: the inode it fences; else -1. */
  public long fenceInode(String key) {
    int at = prefix.length() + Keyspace.INODE_FENCES.length();
    if (key.length() != at + 16 || !key.startsWith(prefix)
        || !key.startsWith(Keyspace.INODE_FENCES, prefix.length())) {
      return -1;
    }
    try {
      return Long.parseUnsignedLong(key.substring(at), 16);
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  public byte[] extentPrefix(long ino) {
    return Keys.of(prefix + "e/" + hex(ino) + "/");
  }

  public byte[] extentChunk(long ino, long firstFileBlock) {
    return Keys.of(prefix + "e/" + hex(ino) + "/" + hex(firstFileBlock));
  }

  public byte[] xattrPrefix(long ino) {
    return Keys.of(prefix + "x/" + hex(ino) + "/");
  }

  public byte[] xattr(long ino, String name) {
    return Keys.of(prefix + "x/" + hex(ino) + "/" + name);
  }

  public byte[] orphans() {
    return Keys.of(prefix + "orphans/");
  }

  /** Every fcntl and flock lock table, version keys and owner keys. */
  public byte[] lockTables(String kind) {
    return Keys.of(prefix + kind + "/");
  }

  public byte[] orphan(long ino) {
    return Keys.of(prefix + "orphans/" + hex(ino));
  }

  /**
   * The fcntl byte-range locks of an inode: this key is the inode's lock-table version (written
   * by every change, compared at commit); the owners' keys live under it plus {@code /}.
   */
  public byte[] posixLocks(long ino) {
    return Keys.of(prefix + "plocks/" + hex(ino));
  }

  /** The flock locks of an inode, laid out as {@link #posixLocks}. */
  public byte[] flocks(long ino) {
    return Keys.of(prefix + "flocks/" + hex(ino));
  }

  /**
   * Whether a watch event inserts this key into a node's cache even if it was not cached: the
   * keys the namespace reads one at a time (inodes, entries, directory times).
   */
  public boolean mirrored(String key) {
    if (!key.startsWith(prefix) || key.length() < prefix.length() + 2) {
      return false;
    }
    char c = key.charAt(prefix.length());
    return key.charAt(prefix.length() + 1) == '/' && (c == 'i' || c == 'd' || c == 'm' || c == 'f');
  }

  /** For an entry key {@code d/<dir>/<hash>/<name>}: its directory's entry prefix; else null. */
  public String entryScope(String key) {
    int at = prefix.length();
    if (key.length() < at + 20 || !key.startsWith(prefix) || key.charAt(at) != 'd'
        || key.charAt(at + 1) != '/' || key.charAt(at + 18) != '/') {
      return null;
    }
    return key.substring(0, at + 19);
  }

  /** The key without the filesystem prefix, or null if it is not one of this filesystem's. */
  public String relative(String key) {
    return space.relative(key);
  }

  public static String hex(long v) {
    return Keyspace.hex(v);
  }
}

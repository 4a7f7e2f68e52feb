package io.etcfs.alloc.arena.internal;

/**
 * One reverse-map entry: the extent starting at its key's block belongs to inode {@code ino}.
 * Stored as {@code <ino, 16 hex>:<length, decimal>}.
 */
record Ref(long ino, long length) {
  String encode() {
    return String.format("%016x:%d", ino, length);
  }

  /** Null if the value is not a reverse-map entry (never trusted to be well formed). */
  static Ref decode(String value) {
    int colon = value.indexOf(':');
    if (colon <= 0) {
      return null;
    }
    try {
      long ino = Long.parseUnsignedLong(value.substring(0, colon), 16);
      long length = Long.parseLong(value.substring(colon + 1).trim());
      return length > 0 ? new Ref(ino, length) : null;
    } catch (NumberFormatException e) {
      return null;
    }
  }
}

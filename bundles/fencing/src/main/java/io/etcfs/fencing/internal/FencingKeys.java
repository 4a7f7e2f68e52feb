package io.etcfs.fencing.internal;

import io.etcfs.spi.meta.Keys;

/** The fencing bundle's keys under {@code /etcfs/<fs>/} (docs/ARCHITECTURE.md, keyspace). */
final class FencingKeys {
  private final String prefix;

  FencingKeys(String fsName) {
    this.prefix = "/etcfs/" + fsName + "/";
  }

  byte[] members() {
    return Keys.of(prefix + "members/");
  }

  byte[] member(String node) {
    return Keys.of(prefix + "members/" + node);
  }

  /** Heartbeat slot {@code slot}: held by one incarnation from its join to its leave/recovery. */
  byte[] slot(int slot) {
    return Keys.of(prefix + "slots/" + String.format("%02x", slot));
  }

  byte[] slots() {
    return Keys.of(prefix + "slots/");
  }

  /** The election key of the recovery of whoever holds {@code slot}. */
  byte[] recovery(int slot) {
    return Keys.of(prefix + "recovery/" + String.format("%02x", slot));
  }

  byte[] fence(String node, long generation) {
    return Keys.of(prefix + "fences/" + node + "/" + String.format("%016x", generation));
  }

  byte[] fences() {
    return Keys.of(prefix + "fences/");
  }

  /** The slot number of a slot key, or -1. */
  static int slotOf(String key) {
    try {
      return Integer.parseInt(key.substring(key.lastIndexOf('/') + 1), 16);
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /** The last element of a key: the node name of a member key. */
  static String last(String key) {
    return key.substring(key.lastIndexOf('/') + 1);
  }
}

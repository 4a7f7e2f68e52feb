package io.etcfs.fencing.internal;

import io.etcfs.spi.fs.Keyspace;

/** The fencing bundle's keys under {@code /etcfs/<fs>/} (docs/ARCHITECTURE.md, keyspace). */
final class FencingKeys {
  private final Keyspace space;

  FencingKeys(String fsName) {
    this.space = Keyspace.of(fsName);
  }

  byte[] members() {
    return space.bytes(Keyspace.MEMBERS);
  }

  byte[] member(String node) {
    return space.bytes(Keyspace.MEMBERS + node);
  }

  /** Heartbeat slot {@code slot}: held by one incarnation from its join to its leave/recovery. */
  byte[] slot(int slot) {
    return space.bytes(Keyspace.SLOTS + Keyspace.hex(slot, 2));
  }

  byte[] slots() {
    return space.bytes(Keyspace.SLOTS);
  }

  /** The election key of the recovery of whoever holds {@code slot}. */
  byte[] recovery(int slot) {
    return space.bytes(Keyspace.RECOVERY + Keyspace.hex(slot, 2));
  }

  byte[] fence(String node, long generation) {
    return space.bytes(Keyspace.FENCES + node + "/" + Keyspace.hex(generation));
  }

  byte[] fences() {
    return space.bytes(Keyspace.FENCES);
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

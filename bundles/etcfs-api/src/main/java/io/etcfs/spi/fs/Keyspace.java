package io.etcfs.spi.fs;

import java.nio.charset.StandardCharsets;

/**
 * Where one filesystem's keys live in etcd: everything under {@code /etcfs/<name>/}, each part of
 * etcfs in its own area. The areas are fixed here, beside their owners, so that no bundle spells
 * another's prefix by hand and a tool (status, recovery, a rebuild) finds them without knowing
 * the plug-in. What lies inside an area is its owner's (docs/ARCHITECTURE.md, "The etcd
 * keyspace"). Numbers in keys are fixed-width lowercase hex ({@link #hex}), so that key order is
 * numeric order.
 */
public final class Keyspace {
  /** Under which every filesystem lives: {@code /etcfs/}. */
  public static final String ROOT = "/etcfs/";

  /** The filesystem record ({@link FsRecord}); written by {@code etcfs format}. */
  public static final String RECORD = "fs";
  /** One key per live member, under its membership lease; the fencing bundle's. */
  public static final String MEMBERS = "members/";
  /** Device heartbeat slots; the fencing bundle's. */
  public static final String SLOTS = "slots/";
  /** Recovery elections; the fencing bundle's. */
  public static final String RECOVERY = "recovery/";
  /** Records of finished recoveries; the fencing bundle's. */
  public static final String FENCES = "fences/";
  /** Inode lock requests and grants; the etcd lock backend's. */
  public static final String LOCKS = "locks/";
  /** Arena claims; the arena allocator's. */
  public static final String ARENAS = "arenas/";
  /** Which inode references each allocated extent; written by the allocator. */
  public static final String BLOCKS = "blocks/";
  /** Nodes out of space asking for arenas; the arena allocator's. */
  public static final String WANTS = "wants/";
  /** Inode fences ({@link InodeFence}), one per inode ever written; the core's (1.1). */
  public static final String INODE_FENCES = "f/";
  /** Each node's Hazelcast member address, for the members to find each other (1.2). */
  public static final String HAZELCAST = "hazelcast/";
  /** The shared free-extent map; the shared allocator's (1.2). */
  public static final String FREE_MAP = "freemap/";
  /**
   * A live switch of lock backend or allocator under way: its request and each node's answer;
   * the core's (1.3).
   */
  public static final String SWITCH = "switch/";
  /** The history of switches, one record per epoch, and when each node resumed (1.3). */
  public static final String SWITCHES = "switches/";

  private final String name;
  private final String root;

  private Keyspace(String name) {
    this.name = name;
    this.root = ROOT + name + "/";
  }

  /**
   * The keyspace of filesystem {@code name}.
   *
   * @throws IllegalArgumentException if the name is empty or holds a {@code /}
   */
  public static Keyspace of(String name) {
    if (name == null || name.isEmpty() || name.indexOf('/') >= 0) {
      throw new IllegalArgumentException("not a filesystem name: '" + name + "'");
    }
    return new Keyspace(name);
  }

  public String name() {
    return name;
  }

  /** {@code /etcfs/<name>/}: every key of the filesystem starts so. */
  public String root() {
    return root;
  }

  /** {@code /etcfs/<name>/<relative>}. */
  public String key(String relative) {
    return root + relative;
  }

  /** {@link #key} as the store's bytes (UTF-8). */
  public byte[] bytes(String relative) {
    return key(relative).getBytes(StandardCharsets.UTF_8);
  }

  /** The filesystem record's key. */
  public byte[] record() {
    return bytes(RECORD);
  }

  /**
   * The key without the filesystem's root, or null if it is not one of this filesystem's keys.
   */
  public String relative(String key) {
    return key.startsWith(root) ? key.substring(root.length()) : null;
  }

  /** {@code v} as {@code digits} lowercase hex digits, zero-padded (an unsigned value). */
  public static String hex(long v, int digits) {
    String s = Long.toHexString(v);
    if (s.length() > digits) {
      throw new IllegalArgumentException(s + " is longer than " + digits + " hex digits");
    }
    return "0".repeat(digits - s.length()) + s;
  }

  /** {@code v} as 16 lowercase hex digits: inode numbers, blocks, generations. */
  public static String hex(long v) {
    return hex(v, 16);
  }

  @Override
  public String toString() {
    return root;
  }
}

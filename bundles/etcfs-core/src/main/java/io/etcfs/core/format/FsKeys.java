package io.etcfs.core.format;

import io.etcfs.spi.meta.Keys;

/**
 * The etcd keyspace of one filesystem: everything lives under {@code /etcfs/<name>/}. The full
 * keyspace is written down in docs/ARCHITECTURE.md.
 */
public final class FsKeys {
  private final String prefix;

  public FsKeys(String fsName) {
    this.prefix = "/etcfs/" + fsName + "/";
  }

  public byte[] prefix() {
    return Keys.of(prefix);
  }

  /** The filesystem record: identity, geometry and cluster-wide backend choices. */
  public byte[] record() {
    return Keys.of(prefix + "fs");
  }

  public byte[] membersPrefix() {
    return Keys.of(prefix + "members/");
  }

  public byte[] member(String node) {
    return Keys.of(prefix + "members/" + node);
  }

  public byte[] arenasPrefix() {
    return Keys.of(prefix + "arenas/");
  }
}

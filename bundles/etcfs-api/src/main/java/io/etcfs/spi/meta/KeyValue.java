package io.etcfs.spi.meta;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * One stored key with its value and the revisions that make optimistic transactions possible.
 *
 * @param key the key bytes
 * @param value the value bytes
 * @param createRevision the store revision at which this key was created (its incarnation)
 * @param modRevision the store revision of the last change to this key
 * @param version how many times the key was written since it was created (1 after creation)
 * @param lease the lease the key is attached to, or 0
 */
public record KeyValue(
    byte[] key, byte[] value, long createRevision, long modRevision, long version, long lease) {

  public KeyValue {
    key = key.clone();
    value = value.clone();
  }

  @Override
  public byte[] key() {
    return key.clone();
  }

  @Override
  public byte[] value() {
    return value.clone();
  }

  public String keyString() {
    return new String(key, StandardCharsets.UTF_8);
  }

  public String valueString() {
    return new String(value, StandardCharsets.UTF_8);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof KeyValue kv
        && Arrays.equals(key, kv.key)
        && Arrays.equals(value, kv.value)
        && createRevision == kv.createRevision
        && modRevision == kv.modRevision
        && version == kv.version
        && lease == kv.lease;
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(key) * 31 + Long.hashCode(modRevision);
  }

  @Override
  public String toString() {
    return keyString() + "@" + modRevision;
  }
}

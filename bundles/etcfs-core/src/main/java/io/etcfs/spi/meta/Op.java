package io.etcfs.spi.meta;

/** One write in a {@link Txn}: a put (optionally under a lease) or a delete of a key or a range. */
public sealed interface Op {

  /** Stores {@code value} at {@code key}; {@code lease} 0 means no lease. */
  record Put(byte[] key, byte[] value, long lease) implements Op {
    public Put {
      key = key.clone();
      value = value.clone();
    }
  }

  /**
   * Deletes {@code key}, or every key in [{@code key}, {@code rangeEnd}) when {@code rangeEnd} is
   * not null.
   */
  record Delete(byte[] key, byte[] rangeEnd) implements Op {
    public Delete {
      key = key.clone();
      rangeEnd = rangeEnd == null ? null : rangeEnd.clone();
    }
  }

  static Op put(byte[] key, byte[] value) {
    return new Put(key, value, 0);
  }

  static Op put(byte[] key, byte[] value, long lease) {
    return new Put(key, value, lease);
  }

  static Op delete(byte[] key) {
    return new Delete(key, null);
  }

  static Op deletePrefix(byte[] prefix) {
    return new Delete(prefix, Keys.prefixEnd(prefix));
  }
}

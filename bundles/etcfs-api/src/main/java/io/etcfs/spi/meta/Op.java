package io.etcfs.spi.meta;

/**
 * One operation of a {@link Txn}: a put (optionally under a lease), a delete of a key or a range,
 * or a read of a range, answered in {@link TxnResult#ranges()} and seeing the writes before it.
 */
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

  /**
   * Reads the keys in [{@code from}, {@code to}) (at most {@code limit}; 0: no limit) as the
   * transaction leaves them up to this point: one round trip for a write and the read that
   * depends on it.
   */
  record Range(byte[] from, byte[] to, int limit) implements Op {
    public Range {
      from = from.clone();
      to = to.clone();
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

  static Op rangePrefix(byte[] prefix) {
    return new Range(prefix, Keys.prefixEnd(prefix), 0);
  }
}

package io.etcfs.core.fs.cache;

import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.RangeResult;
import java.util.Optional;

/** Where reads come from: the node's cache, or the store itself when a retry needs fresh reads. */
public interface KvSource {
  Optional<KeyValue> get(byte[] key);

  RangeResult range(byte[] from, byte[] to, int limit);
}

package io.etcfs.spi.meta;

import java.util.List;

/**
 * The keys of one range read, all as of one store revision.
 *
 * @param kvs the keys found, in key order
 * @param revision the store revision the read saw
 * @param more whether the range held more keys than the limit allowed
 */
public record RangeResult(List<KeyValue> kvs, long revision, boolean more) {
  public RangeResult {
    kvs = List.copyOf(kvs);
  }
}

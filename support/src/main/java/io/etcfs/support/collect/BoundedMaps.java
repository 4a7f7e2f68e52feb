package io.etcfs.support.collect;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Maps that hold at most a fixed number of entries and drop the eldest to stay there: for
 * memory that is a hint or a recent history, where an entry lost costs a little work and never
 * a wrong answer.
 */
public final class BoundedMaps {
  private BoundedMaps() {}

  /**
   * A map of at most {@code capacity} entries, not synchronized. With {@code accessOrder} the
   * entry dropped is the one least recently read or written (an LRU cache), else the one put
   * first.
   */
  public static <K, V> Map<K, V> of(int capacity, boolean accessOrder) {
    if (capacity <= 0) {
      throw new IllegalArgumentException("capacity " + capacity);
    }
    return new LinkedHashMap<>(Math.min(capacity, 64), 0.75f, accessOrder) {
      private static final long serialVersionUID = 1L;

      @Override
      protected boolean removeEldestEntry(Map.Entry<K, V> eldest) {
        return size() > capacity;
      }
    };
  }

  /** {@link #of}, synchronized (every call, as {@link Collections#synchronizedMap}). */
  public static <K, V> Map<K, V> synchronizedOf(int capacity, boolean accessOrder) {
    return Collections.synchronizedMap(of(capacity, accessOrder));
  }
}

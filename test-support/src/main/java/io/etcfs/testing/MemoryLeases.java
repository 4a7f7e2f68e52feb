package io.etcfs.testing;

import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/** The leases of a {@link MemoryMetaStore}; not thread-safe, the store's lock guards it. */
final class MemoryLeases {
  private final Clock clock;
  private final Map<Long, Lease> leases = new HashMap<>();
  private long nextId = 0x7e5700000001L;

  private static final class Lease {
    final long ttlSeconds;
    long deadlineMillis;
    final Set<byte[]> keys = new TreeSet<>(MemoryMetaStore.KEY_ORDER);

    Lease(long ttlSeconds, long deadlineMillis) {
      this.ttlSeconds = ttlSeconds;
      this.deadlineMillis = deadlineMillis;
    }
  }

  MemoryLeases(Clock clock) {
    this.clock = clock;
  }

  long grant(long ttlSeconds) {
    long id = nextId++;
    leases.put(id, new Lease(ttlSeconds, clock.millis() + ttlSeconds * 1000));
    return id;
  }

  boolean exists(long id) {
    return leases.containsKey(id);
  }

  /** Renews a lease and returns its TTL, or -1 if it does not exist. */
  long renew(long id) {
    Lease lease = leases.get(id);
    if (lease == null) {
      return -1;
    }
    lease.deadlineMillis = clock.millis() + lease.ttlSeconds * 1000;
    return lease.ttlSeconds;
  }

  /** The whole seconds a lease has left (rounded up, as etcd does), or -1 if it does not exist. */
  long timeToLive(long id) {
    Lease lease = leases.get(id);
    if (lease == null) {
      return -1;
    }
    return Math.max(0, (lease.deadlineMillis - clock.millis() + 999) / 1000);
  }

  void attach(long id, byte[] key) {
    leases.get(id).keys.add(key);
  }

  void detach(long id, byte[] key) {
    Lease lease = leases.get(id);
    if (lease != null) {
      lease.keys.remove(key);
    }
  }

  /** Removes a lease and returns the keys attached to it (empty if it did not exist). */
  List<byte[]> remove(long id) {
    Lease lease = leases.remove(id);
    return lease == null ? List.of() : new ArrayList<>(lease.keys);
  }

  /** The leases whose deadline has passed on the store's clock. */
  List<Long> due() {
    long now = clock.millis();
    return leases.entrySet().stream()
        .filter(e -> e.getValue().deadlineMillis <= now)
        .map(Map.Entry::getKey)
        .sorted()
        .toList();
  }
}

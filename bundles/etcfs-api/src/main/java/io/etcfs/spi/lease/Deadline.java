package io.etcfs.spi.lease;

import java.util.function.LongSupplier;

/**
 * A node's own view of how long its lease is provably alive, on a monotonic clock. It moves
 * forward only when a renewal is acknowledged, and only to (when that renewal was <em>sent</em>)
 * + (the TTL granted): the store started the new TTL no earlier than the send, so the node never
 * believes in more lease than etcd gave it. Once passed it stays passed, even if a late
 * acknowledgement arrives, because by then another node may already act on the expiry.
 */
public final class Deadline {
  private final LongSupplier clock;
  private long at;
  private boolean expired;

  public Deadline(LongSupplier clock, long at) {
    this.clock = clock;
    this.at = at;
  }

  /** Reads the clock this deadline runs on, in nanoseconds. */
  public long now() {
    return clock.getAsLong();
  }

  /** The deadline in nanoseconds of {@link #now()}. */
  public synchronized long at() {
    return at;
  }

  /**
   * Records a renewal sent at {@code sentAt} and acknowledged with {@code ttlNanos}; false if the
   * deadline had already passed, in which case nothing changes.
   */
  public synchronized boolean extend(long sentAt, long ttlNanos) {
    if (expired()) {
      return false;
    }
    at = Math.max(at, sentAt + ttlNanos);
    return true;
  }

  /** True once the deadline has passed or {@link #expire()} was called; never false again. */
  public synchronized boolean expired() {
    if (!expired && now() - at >= 0) {
      expired = true;
    }
    return expired;
  }

  public synchronized void expire() {
    expired = true;
  }
}

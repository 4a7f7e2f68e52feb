package io.etcfs.lock.hazelcast.internal;

import com.hazelcast.map.EntryProcessor;
import com.hazelcast.map.ExtendedMapEntry;
import io.etcfs.spi.lock.LockMode;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

/**
 * The changes of a lock queue ({@link LockQueue}), each run by Hazelcast on the partition that
 * owns the inode's entry, one at a time per entry. The primary computes the new queue (a grant
 * reads the owner's clock for its token); the backup is sent that queue, not the change, so
 * primary and backup never disagree on a token.
 */
final class Processors {
  /**
   * How long an emptied queue stays as a tombstone with its last token. A queue created after
   * that starts its tokens from the clock ({@code now << 20}), which is then beyond anything the
   * old queue granted unless it granted 2^20 locks per millisecond of this interval, or the
   * owners' clocks differ by more than it.
   */
  static final long TOMBSTONE_MILLIS = TimeUnit.SECONDS.toMillis(30);

  private Processors() {}

  /** Adds a request (or finds the session's own) and returns the queue after the change. */
  static EntryProcessor<Long, LockQueue, LockQueue> request(long session, String node,
      LockMode mode) {
    return new Change(q -> q.request(session, node, mode, System.currentTimeMillis()));
  }

  /** Removes the session's request, granted or not. */
  static EntryProcessor<Long, LockQueue, LockQueue> release(long session) {
    return new Change(q -> q.remove(session, System.currentTimeMillis()));
  }

  /** Removes the session's request if it still waits; returns the queue after. */
  static EntryProcessor<Long, LockQueue, LockQueue> withdraw(long session) {
    return new Change(q -> q.withdraw(session, System.currentTimeMillis()));
  }

  /** Removes every request of the sessions {@code gone}: their nodes died. */
  static EntryProcessor<Long, LockQueue, LockQueue> drop(Set<Long> gone) {
    Set<Long> copy = Set.copyOf(gone);
    return new Change(q -> q.removeIf(copy::contains, System.currentTimeMillis()));
  }

  /** A change of one queue, applied on the primary; the backup receives the outcome. */
  private static final class Change implements EntryProcessor<Long, LockQueue, LockQueue> {
    private static final long serialVersionUID = 1L;
    private final SerializableOperator change;
    /** The primary's outcome, for {@link #getBackupProcessor} (not sent to the primary). */
    private transient LockQueue outcome;
    private transient boolean changed;

    Change(SerializableOperator change) {
      this.change = change;
    }

    @Override
    public LockQueue process(Map.Entry<Long, LockQueue> entry) {
      LockQueue before = entry.getValue();
      LockQueue after = change.apply(before == null ? LockQueue.empty() : before);
      changed = after != before && !(before == null && after.isEmpty());
      if (changed) {
        store(entry, after);
      }
      outcome = after;
      return after;
    }

    @Override
    public EntryProcessor<Long, LockQueue, LockQueue> getBackupProcessor() {
      return changed ? new Put(outcome) : null;
    }
  }

  /** Puts the queue the primary computed. */
  private static final class Put implements EntryProcessor<Long, LockQueue, LockQueue> {
    private static final long serialVersionUID = 1L;
    private final LockQueue value;

    Put(LockQueue value) {
      this.value = value;
    }

    @Override
    public LockQueue process(Map.Entry<Long, LockQueue> entry) {
      store(entry, value);
      return value;
    }

    @Override
    public EntryProcessor<Long, LockQueue, LockQueue> getBackupProcessor() {
      return null;
    }
  }

  /** An emptied queue is kept as a tombstone for {@link #TOMBSTONE_MILLIS}, then expires. */
  @SuppressWarnings("unchecked")
  private static void store(Map.Entry<Long, LockQueue> entry, LockQueue value) {
    if (value.isEmpty()) {
      ((ExtendedMapEntry<Long, LockQueue>) entry).setValue(value, TOMBSTONE_MILLIS,
          TimeUnit.MILLISECONDS);
    } else {
      // No expiry while anyone holds or waits (a TTL of 0 is none).
      ((ExtendedMapEntry<Long, LockQueue>) entry).setValue(value, 0, TimeUnit.MILLISECONDS);
    }
  }

  /** A queue change that can travel to the partition owner. */
  interface SerializableOperator extends UnaryOperator<LockQueue>, java.io.Serializable {}
}

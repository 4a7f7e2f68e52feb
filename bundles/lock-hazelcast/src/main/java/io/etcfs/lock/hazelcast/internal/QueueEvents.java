package io.etcfs.lock.hazelcast.internal;

import com.hazelcast.core.EntryEvent;
import com.hazelcast.map.listener.EntryAddedListener;
import com.hazelcast.map.listener.EntryEvictedListener;
import com.hazelcast.map.listener.EntryExpiredListener;
import com.hazelcast.map.listener.EntryRemovedListener;
import com.hazelcast.map.listener.EntryUpdatedListener;

/**
 * The lock map's events, each handed on as (inode, queue now), null for a queue gone. Hazelcast
 * delivers one key's events in order, on one event thread per key.
 */
final class QueueEvents implements EntryAddedListener<Long, LockQueue>,
    EntryUpdatedListener<Long, LockQueue>, EntryRemovedListener<Long, LockQueue>,
    EntryExpiredListener<Long, LockQueue>, EntryEvictedListener<Long, LockQueue> {

  /** Where the events go. */
  interface Sink {
    void changed(long inode, LockQueue now);
  }

  private final Sink sink;

  QueueEvents(Sink sink) {
    this.sink = sink;
  }

  @Override
  public void entryAdded(EntryEvent<Long, LockQueue> e) {
    sink.changed(e.getKey(), e.getValue());
  }

  @Override
  public void entryUpdated(EntryEvent<Long, LockQueue> e) {
    sink.changed(e.getKey(), e.getValue());
  }

  @Override
  public void entryRemoved(EntryEvent<Long, LockQueue> e) {
    sink.changed(e.getKey(), null);
  }

  @Override
  public void entryExpired(EntryEvent<Long, LockQueue> e) {
    sink.changed(e.getKey(), null);
  }

  @Override
  public void entryEvicted(EntryEvent<Long, LockQueue> e) {
    sink.changed(e.getKey(), null);
  }
}

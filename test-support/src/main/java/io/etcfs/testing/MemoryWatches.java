package io.etcfs.testing;

import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.MetaStoreException;
import io.etcfs.spi.meta.MetaStoreException.Kind;
import io.etcfs.spi.meta.Watch;
import io.etcfs.spi.meta.WatchEvent;
import io.etcfs.spi.meta.WatchListener;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;

/**
 * The change history and the watches of a {@link MemoryMetaStore}. Not thread-safe: the store's
 * lock guards it. Deliveries go to one executor thread in the order they are queued, which under
 * the store's lock is revision order.
 */
final class MemoryWatches {
  private final ExecutorService delivery;
  private final List<Batch> history = new ArrayList<>();
  private final List<Watcher> watchers = new ArrayList<>();
  private long compactedRevision;
  /** The revision of the last change published: every change up to it is queued for delivery. */
  private long latest;

  /** The events of one revision. */
  private record Batch(long revision, List<WatchEvent> events) {}

  private final class Watcher implements Watch {
    final byte[] prefix;
    final WatchListener listener;
    volatile boolean closed;

    Watcher(byte[] prefix, WatchListener listener) {
      this.prefix = prefix.clone();
      this.listener = listener;
    }

    boolean matches(KeyValue kv) {
      byte[] key = kv.key();
      return key.length >= prefix.length
          && Arrays.equals(key, 0, prefix.length, prefix, 0, prefix.length);
    }

    @Override
    public void requestProgress() {
      synchronized (MemoryWatches.this) {
        long at = latest;
        deliver(this, () -> listener.onProgress(at));
      }
    }

    @Override
    public void close() {
      closed = true;
      synchronized (MemoryWatches.this) {
        watchers.remove(this);
      }
    }
  }

  MemoryWatches(ExecutorService delivery) {
    this.delivery = delivery;
  }

  long compactedRevision() {
    return compactedRevision;
  }

  synchronized Watch watch(byte[] prefix, long fromRevision, WatchListener listener) {
    Watcher watcher = new Watcher(prefix, listener);
    if (fromRevision != 0 && fromRevision < compactedRevision) {
      MetaStoreException error = new MetaStoreException(Kind.COMPACTED, "memory store compacted"
          + " the history up to revision " + compactedRevision + " that this watch needed");
      deliver(watcher, () -> listener.onError(error));
      return watcher;
    }
    if (fromRevision != 0) {
      for (Batch batch : history) {
        if (batch.revision() >= fromRevision) {
          send(watcher, batch.events());
        }
      }
    }
    watchers.add(watcher);
    return watcher;
  }

  synchronized void publish(long revision, List<WatchEvent> events) {
    latest = Math.max(latest, revision);
    if (events.isEmpty()) {
      return;
    }
    history.add(new Batch(revision, List.copyOf(events)));
    for (Watcher watcher : watchers) {
      send(watcher, events);
    }
  }

  /** Ends every watch with {@code error}, as etcd does when it cancels its watchers. */
  synchronized void failAll(MetaStoreException error) {
    for (Watcher watcher : List.copyOf(watchers)) {
      deliver(watcher, () -> watcher.listener.onError(error));
    }
    watchers.clear();
  }

  synchronized void compact(long revision) {
    compactedRevision = revision;
    history.removeIf(b -> b.revision() < revision);
  }

  private void send(Watcher watcher, List<WatchEvent> events) {
    List<WatchEvent> mine = events.stream().filter(e -> watcher.matches(e.kv())).toList();
    if (!mine.isEmpty()) {
      deliver(watcher, () -> watcher.listener.onEvents(mine));
    }
  }

  private void deliver(Watcher watcher, Runnable call) {
    try {
      delivery.execute(() -> {
        if (!watcher.closed) {
          call.run();
        }
      });
    } catch (RejectedExecutionException e) {
      // the store is closed: nobody is listening any more
    }
  }
}

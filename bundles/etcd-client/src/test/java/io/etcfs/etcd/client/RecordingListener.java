package io.etcfs.etcd.client;

import io.etcfs.spi.meta.MetaStoreException;
import io.etcfs.spi.meta.WatchEvent;
import io.etcfs.spi.meta.WatchListener;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** Collects a watch's events and its error for assertions. */
final class RecordingListener implements WatchListener {
  private final List<WatchEvent> events = new ArrayList<>();
  private final CompletableFuture<MetaStoreException> error = new CompletableFuture<>();

  @Override
  public synchronized void onEvents(List<WatchEvent> batch) {
    events.addAll(batch);
    notifyAll();
  }

  @Override
  public void onError(MetaStoreException e) {
    error.complete(e);
  }

  synchronized List<WatchEvent> await(int count) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (events.size() < count) {
      long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
      if (left <= 0) {
        throw new AssertionError("saw only " + events + ", error " + error.getNow(null));
      }
      wait(left);
    }
    return List.copyOf(events);
  }

  MetaStoreException awaitError() throws Exception {
    return error.get(10, TimeUnit.SECONDS);
  }
}

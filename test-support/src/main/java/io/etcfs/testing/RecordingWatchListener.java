package io.etcfs.testing;

import io.etcfs.spi.meta.MetaStoreException;
import io.etcfs.spi.meta.WatchEvent;
import io.etcfs.spi.meta.WatchListener;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** A {@link WatchListener} that records what a watch delivers, for assertions in tests. */
public final class RecordingWatchListener implements WatchListener {
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

  /** Waits until at least {@code count} events arrived and returns all of them. */
  public synchronized List<WatchEvent> await(int count, Duration timeout)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (events.size() < count) {
      long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
      if (left <= 0) {
        throw new AssertionError("expected " + count + " events within " + timeout + ", saw "
            + events + (error.isDone() ? ", error " + error.getNow(null).getMessage() : ""));
      }
      wait(left);
    }
    return List.copyOf(events);
  }

  public synchronized List<WatchEvent> events() {
    return List.copyOf(events);
  }

  /** Waits for the watch to end with an error and returns it. */
  public MetaStoreException awaitError(Duration timeout) throws InterruptedException {
    try {
      return error.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      throw new AssertionError("the watch did not fail within " + timeout + "; saw " + events());
    } catch (ExecutionException e) {
      throw new AssertionError(e.getCause());
    }
  }

  public boolean failed() {
    return error.isDone();
  }
}

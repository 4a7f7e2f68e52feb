package io.etcfs.spi.meta;

/** A running watch; closing it stops delivery. */
public interface Watch extends AutoCloseable {
  @Override
  void close();

  /**
   * Asks the store for a progress notice: once every change up to the store's current revision
   * has been delivered, the listener's {@link WatchListener#onProgress} receives that revision,
   * even if none of those changes fell under this watch. How a watcher that waits for a revision
   * learns that nothing it watches changed up to there.
   */
  void requestProgress();
}

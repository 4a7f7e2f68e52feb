package io.etcfs.spi.meta;

import java.util.List;
import org.osgi.annotation.versioning.ConsumerType;

/** Receives a watch's changes, in revision order, one batch per store revision or more. */
@ConsumerType
public interface WatchListener {

  void onEvents(List<WatchEvent> events);

  /**
   * The watch ended and delivers nothing more: it was cancelled by the store, its start revision
   * was compacted away ({@link MetaStoreException.Kind#COMPACTED}), or the connection failed. A
   * cache fed by the watch must re-list and start a new watch, never keep serving its entries.
   */
  void onError(MetaStoreException error);

  /**
   * Every change up to {@code revision} under this watch has been delivered (the answer to
   * {@link Watch#requestProgress}).
   */
  default void onProgress(long revision) {}
}

package io.etcfs.etcd.client;

import io.etcd.jetcd.Watch.Listener;
import io.etcd.jetcd.Watch.Watcher;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchResponse;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.MetaStoreException;
import io.etcfs.spi.meta.MetaStoreException.Kind;
import io.etcfs.spi.meta.Watch;
import io.etcfs.spi.meta.WatchEvent;
import io.etcfs.spi.meta.WatchListener;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One SPI watch on a jetcd watcher. jetcd silently re-creates a watch after a transient error;
 * the SPI instead ends the watch at the first error, because a cache fed by it must re-list
 * rather than trust that nothing was missed while the stream was down.
 */
final class EtcdWatch implements Watch, Listener {
  private static final System.Logger LOG = System.getLogger(EtcdWatch.class.getName());

  private final WatchListener listener;
  private final Executor delivery;
  private final EtcdErrors errors;
  private final String prefix;
  private final AtomicBoolean ended = new AtomicBoolean();
  private volatile boolean closed;
  private volatile Watcher watcher;

  private EtcdWatch(WatchListener listener, Executor delivery, EtcdErrors errors, byte[] prefix) {
    this.listener = listener;
    this.delivery = delivery;
    this.errors = errors;
    this.prefix = new String(prefix, StandardCharsets.UTF_8);
  }

  /** Must run with the bundle's class loader as the thread context loader. */
  static EtcdWatch start(io.etcd.jetcd.Watch client, byte[] prefix, long fromRevision,
      WatchListener listener, Executor delivery, EtcdErrors errors) {
    EtcdWatch watch = new EtcdWatch(listener, delivery, errors, prefix);
    WatchOption option = WatchOption.builder()
        .withRange(JetcdConversions.rangeEnd(Keys.prefixEnd(prefix)))
        .withRevision(fromRevision)
        .withRequireLeader(true)
        .build();
    watch.watcher = client.watch(JetcdConversions.bytes(prefix), option, watch);
    if (watch.ended.get()) {
      watch.watcher.close();
    }
    return watch;
  }

  @Override
  public void onNext(WatchResponse response) {
    if (ended.get()) {
      return;
    }
    if (response.getEvents().isEmpty()) {
      if (response.isProgressNotify()) {
        long revision = response.getHeader().getRevision();
        deliver(() -> listener.onProgress(revision));
      }
      return;
    }
    List<WatchEvent> events =
        response.getEvents().stream().map(JetcdConversions::watchEvent).toList();
    deliver(() -> listener.onEvents(events));
  }

  @Override
  public void onError(Throwable failure) {
    end(errors.map(failure));
  }

  @Override
  public void onCompleted() {
    end(new MetaStoreException(Kind.OTHER, errors.where() + " ended the watch on '" + prefix + "'"));
  }

  private void end(MetaStoreException error) {
    if (closed || !ended.compareAndSet(false, true)) {
      return;
    }
    Watcher current = watcher;
    if (current != null) {
      current.close();
    }
    deliver(() -> listener.onError(error));
  }

  private void deliver(Runnable call) {
    if (closed) {
      return;
    }
    try {
      delivery.execute(() -> run(call));
    } catch (RejectedExecutionException e) {
      // the store is closing: nobody is listening any more
    }
  }

  private void run(Runnable call) {
    {
      if (closed) {
        return;
      }
      try {
        call.run();
      } catch (RuntimeException e) {
        LOG.log(System.Logger.Level.WARNING, "a watch listener on '" + prefix + "' failed", e);
      }
    }
  }

  @Override
  public void requestProgress() {
    Watcher current = watcher;
    if (current != null && !ended.get()) {
      EtcdMetaStore.withBundleLoader(() -> {
        current.requestProgress();
        return null;
      });
    }
  }

  @Override
  public void close() {
    closed = true;
    ended.set(true);
    Watcher current = watcher;
    if (current != null) {
      EtcdMetaStore.withBundleLoader(() -> {
        current.close();
        return null;
      });
    }
  }
}

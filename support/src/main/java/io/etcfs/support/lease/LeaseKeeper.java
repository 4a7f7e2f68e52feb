package io.etcfs.support.lease;

import io.etcfs.spi.lease.Deadline;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.MetaStoreException;
import java.lang.System.Logger.Level;
import java.lang.System.Logger;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * Renews the membership lease every third of its TTL, one acknowledged keep-alive at a time, and
 * reports the lapse as soon as the node can no longer prove the lease alive.
 *
 * <p>Each keep-alive runs on a helper thread while this keeper waits for it at most until the
 * deadline: a store call is bounded only by the store's request timeout, which can be longer than
 * what is left of the lease, and the lapse must be reported when the deadline passes, not when a
 * stuck call finally returns.
 */
public final class LeaseKeeper {
  private static final Logger LOG = System.getLogger(LeaseKeeper.class.getName());
  private static final long MAX_RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);
  private static final Duration STOP_WAIT = Duration.ofSeconds(5);

  private final MetaStore store;
  private final long lease;
  private final Deadline deadline;
  private final long intervalNanos;
  private final Consumer<String> onLapse;
  private final ExecutorService caller;
  private final Thread thread;
  private volatile boolean stopping;
  private volatile Instant lastAcknowledged;
  private boolean failing;
  private String lapseReason = "no keep-alive was acknowledged before the lease deadline";

  public LeaseKeeper(
      MetaStore store,
      long lease,
      Duration ttl,
      Deadline deadline,
      String name,
      Consumer<String> onLapse) {
    this.store = store;
    this.lease = lease;
    this.deadline = deadline;
    this.intervalNanos = ttl.toNanos() / 3;
    this.onLapse = onLapse;
    this.caller = Executors.newSingleThreadExecutor(r -> daemon(r, name + "-call"));
    this.thread = daemon(this::run, name);
  }

  public void start() {
    thread.start();
  }

  /**
   * When the last acknowledged keep-alive was sent, on the wall clock (for people: the shell's
   * {@code leases}), or empty before the first one.
   */
  public Optional<Instant> lastAcknowledged() {
    return Optional.ofNullable(lastAcknowledged);
  }

  /** Stops renewing; the lease then lives out its TTL unless the caller revokes it. */
  public void stop() {
    stopping = true;
    thread.interrupt();
    try {
      thread.join(STOP_WAIT.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    caller.shutdownNow();
  }

  private void run() {
    long next = deadline.now() + intervalNanos;
    while (!stopping) {
      if (!sleepUntil(Math.min(next, deadline.at()))) {
        return;
      }
      if (deadline.expired()) {
        lapse();
        return;
      }
      if (deadline.now() - next >= 0) {
        next = renew();
      }
    }
  }

  /** Sends one keep-alive and returns when the next one is due. */
  private long renew() {
    long sentAt = deadline.now();
    Future<Long> call = caller.submit(() -> store.keepAliveOnce(lease));
    try {
      long ttlSeconds = call.get(Math.max(0, deadline.at() - sentAt), TimeUnit.NANOSECONDS);
      return acknowledged(sentAt, ttlSeconds);
    } catch (TimeoutException e) {
      call.cancel(true);
      return sentAt;
    } catch (ExecutionException e) {
      return failed(e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return sentAt;
    }
  }

  private long acknowledged(long sentAt, long ttlSeconds) {
    if (ttlSeconds <= 0) {
      return failed(new MetaStoreException(MetaStoreException.Kind.LEASE_NOT_FOUND, "TTL 0"));
    }
    if (failing) {
      LOG.log(Level.INFO, "lease {0} renewed again", Long.toHexString(lease));
      failing = false;
    }
    deadline.extend(sentAt, TimeUnit.SECONDS.toNanos(ttlSeconds));
    lastAcknowledged = Instant.now().minusNanos(Math.max(0, deadline.now() - sentAt));
    return sentAt + intervalNanos;
  }

  private long failed(Throwable cause) {
    if (cause instanceof MetaStoreException e
        && e.kind() == MetaStoreException.Kind.LEASE_NOT_FOUND) {
      lapseReason = "the store no longer knows lease " + Long.toHexString(lease);
      deadline.expire();
      return deadline.now();
    }
    if (!failing) {
      LOG.log(Level.WARNING, "renewing lease {0} failed, retrying until its deadline: {1}",
          Long.toHexString(lease), cause.toString());
      failing = true;
    }
    return deadline.now() + Math.min(intervalNanos, MAX_RETRY_NANOS);
  }

  private void lapse() {
    if (!stopping) {
      onLapse.accept(lapseReason);
    }
  }

  private boolean sleepUntil(long wakeAt) {
    long nanos = wakeAt - deadline.now();
    if (nanos <= 0) {
      return !stopping;
    }
    try {
      TimeUnit.NANOSECONDS.sleep(nanos);
      return !stopping;
    } catch (InterruptedException e) {
      return false;
    }
  }

  private static Thread daemon(Runnable body, String name) {
    Thread thread = new Thread(body, name);
    thread.setDaemon(true);
    return thread;
  }
}

package io.etcfs.lock.hazelcast.internal;

import com.hazelcast.map.IMap;
import io.etcfs.spi.lease.Deadline;
import io.etcfs.spi.lock.LockSession;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * A lock session on Hazelcast: an entry {@code session id → node} in the sessions map with a
 * time to live, renewed every third of it, and this node's own deadline, counted as etcd's lock
 * session counts it: from when the last acknowledged renewal was <em>sent</em>. The entry's
 * owner starts its TTL no earlier than that, so once another node sees the entry gone this
 * node's deadline has passed and it uses nothing it cached under the session's locks.
 *
 * <p>A renewal is sent only while this member sees a majority of the registered members
 * ({@code majority}): a member cut off from the others forms a cluster of its own, where its
 * entry would live on while the others' copy expires and its locks are granted elsewhere. A
 * renewal never resurrects an expired entry ({@link IMap#setTtl} changes only a live one).
 *
 * <p>Hazelcast keeps an entry's expiry time in whole seconds, rounded down (5.x stores it as
 * seconds since a base time), so an entry given a TTL of 2 s can expire as little as 1.001 s
 * after it was set. The entry is therefore given {@link #GRAIN} more than the session's TTL:
 * rounded down, it still outlives this node's deadline, which is counted from the exact send
 * time. A dead node's locks are free between TTL and TTL + 1 s after its last renewal.
 */
final class HzSession implements LockSession {
  private static final Logger LOG = System.getLogger(HzSession.class.getName());
  /** The granularity of Hazelcast's entry expiry: what its rounding can take off a TTL. */
  static final Duration GRAIN = Duration.ofSeconds(1);

  private final long id;
  private final IMap<Long, String> sessions;
  private final Duration ttl;
  private final Deadline deadline;
  private final BooleanSupplier majority;
  private final Consumer<HzSession> onEnd;
  private final CompletableFuture<Void> done = new CompletableFuture<>();
  private final Thread renewer;
  private volatile boolean stopping;
  private volatile String endReason;
  private final java.util.concurrent.atomic.AtomicBoolean ended =
      new java.util.concurrent.atomic.AtomicBoolean();

  private HzSession(long id, IMap<Long, String> sessions, Duration ttl, Deadline deadline,
      BooleanSupplier majority, Consumer<HzSession> onEnd) {
    this.id = id;
    this.sessions = sessions;
    this.ttl = ttl;
    this.deadline = deadline;
    this.majority = majority;
    this.onEnd = onEnd;
    this.renewer = new Thread(this::renewals, "etcfs-hazelcast-session-" + Long.toHexString(id));
    renewer.setDaemon(true);
  }

  static HzSession open(long id, String node, IMap<Long, String> sessions, Duration ttl,
      BooleanSupplier majority, Consumer<HzSession> onEnd) {
    long sentAt = System.nanoTime();
    sessions.set(id, node, entryTtlMillis(ttl), TimeUnit.MILLISECONDS);
    Deadline deadline = new Deadline(System::nanoTime, sentAt + ttl.toNanos());
    HzSession s = new HzSession(id, sessions, ttl, deadline, majority, onEnd);
    s.renewer.start();
    return s;
  }

  /** The entry's TTL: the session's plus what Hazelcast's rounding down can take off. */
  static long entryTtlMillis(Duration ttl) {
    return ttl.plus(GRAIN).toMillis();
  }

  @Override
  public long id() {
    return id;
  }

  @Override
  public boolean isExpired() {
    return deadline.expired();
  }

  @Override
  public CompletionStage<Void> done() {
    return done;
  }

  /** Why the session ended, or null while it lives. */
  String endReason() {
    return endReason;
  }

  /**
   * Renews every third of the TTL. A renewal that hangs (the entry's partition owner died and
   * Hazelcast has not noticed yet) is not waited for past the deadline: the deadline passes by
   * itself, {@link #isExpired} says so, and the check after each wait ends the session.
   */
  private void renewals() {
    long interval = ttl.toNanos() / 3;
    long next = System.nanoTime() + interval;
    while (!stopping) {
      long left = Math.min(next, deadline.at()) - System.nanoTime();
      if (left > 0) {
        try {
          TimeUnit.NANOSECONDS.sleep(left);
        } catch (InterruptedException e) {
          return;
        }
      }
      if (stopping) {
        return;
      }
      if (deadline.expired()) {
        end("no renewal was acknowledged before the session's deadline");
        return;
      }
      if (System.nanoTime() - next < 0) {
        continue;
      }
      next = System.nanoTime() + interval;
      if (!majority.getAsBoolean()) {
        LOG.log(Level.WARNING, "lock session {0}: this member sees no majority of the"
            + " registered members; not renewing", Long.toHexString(id));
        continue;
      }
      long sentAt = System.nanoTime();
      try {
        if (!sessions.setTtl(id, entryTtlMillis(ttl), TimeUnit.MILLISECONDS)) {
          end("its entry expired before the renewal reached it");
          return;
        }
        deadline.extend(sentAt, ttl.toNanos());
      } catch (RuntimeException e) {
        if (stopping) {
          return;
        }
        LOG.log(Level.WARNING, "lock session {0}: renewal failed: {1}", Long.toHexString(id),
            e.toString());
      }
    }
  }

  /**
   * Ends the session if its deadline passed: called by the service's timer too, because a
   * renewal can hang in Hazelcast past the deadline and this must not wait for it.
   */
  void checkDeadline() {
    if (!stopping && deadline.expired()) {
      end("no renewal was acknowledged before the session's deadline");
    }
  }

  private void end(String reason) {
    if (!ended.compareAndSet(false, true)) {
      return;
    }
    deadline.expire();
    endReason = reason;
    LOG.log(Level.WARNING, "lock session {0} ended: {1}", Long.toHexString(id), reason);
    onEnd.accept(this);
    done.complete(null);
  }

  /** Ends the session on purpose: its entry goes, and the others free its locks. */
  void close() {
    boolean lapsed = deadline.expired();
    deadline.expire();
    stopping = true;
    renewer.interrupt();
    if (!lapsed) {
      try {
        sessions.delete(id);
      } catch (RuntimeException e) {
        // it expires within its TTL
      }
    }
    if (ended.compareAndSet(false, true)) {
      endReason = "closed";
    }
    done.complete(null);
  }

  /** Stops renewing without telling anyone, as a crash would. */
  void halt() {
    stopping = true;
    renewer.interrupt();
  }

  @Override
  public String toString() {
    return "lock session " + Long.toHexString(id);
  }
}

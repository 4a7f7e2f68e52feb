package io.etcfs.lock.etcd.internal;

import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.NoWait;
import java.lang.System.Logger.Level;
import java.lang.System.Logger;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * What every part of the etcd lock service shares: the lock session (opened on first use), the
 * locks this node holds ({@link Held}), the inodes it acquires or holds ({@link InodeState}),
 * whether the service is closed, and the monitor that waiters wait on ({@link #waitFor}) and
 * every change of those wakes ({@link #wakeAll}).
 */
final class NodeLocks {
  private static final Logger LOG = System.getLogger(EtcdLockService.class.getName());

  final Map<Long, Held> held = new ConcurrentHashMap<>();
  /** Inodes being acquired or held here: their request gate and newest queue event. */
  final Map<Long, InodeState> inodes = new ConcurrentHashMap<>();
  private final Object changed = new Object();
  private final MetaStore store;
  private final Duration sessionTtl;
  private final String nodeName;
  private volatile Session session;
  private volatile boolean closed;

  NodeLocks(MetaStore store, Duration sessionTtl, String nodeName) {
    this.store = store;
    this.sessionTtl = sessionTtl;
    this.nodeName = nodeName;
  }

  /** The live session, opened now if there is none (the old one ended). */
  Session session() {
    synchronized (this) {
      Session s = session;
      if (s == null || s.isExpired()) {
        checkOpen();
        s = Session.open(store, sessionTtl, "etcfs-locks-" + nodeName, this::sessionEnded);
        session = s;
      }
      return s;
    }
  }

  /** The session last opened, live or not; null before the first. Opens nothing. */
  Session current() {
    return session;
  }

  boolean closed() {
    return closed;
  }

  /** From now on no session opens and nothing waits ({@link #waitFor} answers false). */
  void close() {
    closed = true;
  }

  void checkOpen() {
    if (closed) {
      throw new IllegalStateException("the etcd lock service of " + nodeName + " is stopped");
    }
  }

  private void sessionEnded(Session s, String reason) {
    LOG.log(Level.WARNING, "lock session {0} of {1} ended: {2}", Long.toHexString(s.lease),
        nodeName, reason);
    held.values().removeIf(h -> h.session == s);
    wakeAll();
  }

  void wakeAll() {
    synchronized (changed) {
      changed.notifyAll();
    }
  }

  /**
   * Waits, woken by every batch the watch applies, until {@code done} holds; false at the
   * deadline, once closed, or when interrupted (the interrupt flag set again).
   */
  boolean waitFor(BooleanSupplier done, long deadline) {
    synchronized (changed) {
      while (!done.getAsBoolean()) {
        NoWait.check();
        long left = deadline - System.nanoTime();
        if (left <= 0 || closed) {
          return false;
        }
        try {
          TimeUnit.NANOSECONDS.timedWait(changed, left);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return false;
        }
      }
      return true;
    }
  }
}

package io.etcfs.lock.etcd.internal;

import io.etcfs.spi.lock.LockMode;
import io.etcfs.spi.lock.LockService;
import java.util.HashMap;
import java.util.Map;

/**
 * Every inode lock key of the filesystem as this node's watch on {@code locks/} shows it: for
 * each inode, each session's request with its create revision, mode and mod revision. The first request in create-revision order is
 * the holder (a shared first request may share with shared ones behind it; an exclusive first
 * request holds alone). Rebuilt from a full read whenever the watch (re)starts, then kept by its
 * events.
 */
final class LockView {
  /** One request. */
  record Request(long lease, long createRevision, LockMode mode, long modRevision) {}

  private final Map<Long, Map<Long, Request>> byInode = new HashMap<>();
  /** Starts over from a full read of every lock key (put them next). */
  synchronized void rebuild() {
    byInode.clear();
  }

  /** A request's key put (or rewritten: a downgrade). */
  synchronized void put(long inode, Request r) {
    byInode.computeIfAbsent(inode, i -> new HashMap<>()).put(r.lease(), r);
  }

  /** A request's key deleted. */
  synchronized void delete(long inode, long lease) {
    Map<Long, Request> queue = byInode.get(inode);
    if (queue != null) {
      queue.remove(lease);
    }
    if (queue != null && queue.isEmpty()) {
      byInode.remove(inode);
    }
  }

  /** The exclusive holder of {@code inode} (first in line and exclusive), or null if none. */
  synchronized Request exclusiveHolder(long inode) {
    Map<Long, Request> queue = byInode.get(inode);
    if (queue == null) {
      return null;
    }
    Request first = first(queue);
    return first != null && first.mode() == LockMode.EXCLUSIVE ? first : null;
  }

  /**
   * Other sessions' exclusive interest in {@code inode}: none; one exclusive request, first in
   * line (the holder), and no other; or one that waits (behind a reader or another writer).
   */
  synchronized LockService.Writer writerElsewhere(long inode, long own) {
    Map<Long, Request> queue = byInode.get(inode);
    if (queue == null) {
      return LockService.Writer.NONE;
    }
    Request first = first(queue);
    LockService.Writer found = LockService.Writer.NONE;
    for (Request r : queue.values()) {
      if (r.mode() != LockMode.EXCLUSIVE || r.lease() == own) {
        continue;
      }
      if (r != first || found != LockService.Writer.NONE) {
        return LockService.Writer.WAITING;
      }
      found = LockService.Writer.HOLDING;
    }
    return found;
  }

  /** The request first in create-revision order: the holder, or the first of the holders. */
  private static Request first(Map<Long, Request> queue) {
    Request first = null;
    for (Request r : queue.values()) {
      if (first == null || r.createRevision() < first.createRevision()) {
        first = r;
      }
    }
    return first;
  }

  /** Whether any request on {@code inode}, held or waiting, is exclusive. */
  synchronized boolean hasExclusive(long inode) {
    Map<Long, Request> queue = byInode.get(inode);
    return queue != null
        && queue.values().stream().anyMatch(r -> r.mode() == LockMode.EXCLUSIVE);
  }

  /** The request of session {@code lease} on {@code inode}, or null. */
  synchronized Request request(long inode, long lease) {
    Map<Long, Request> queue = byInode.get(inode);
    return queue == null ? null : queue.get(lease);
  }

  /**
   * The first request on {@code inode} after {@code token} (by create revision) that conflicts
   * with a lock of mode {@code held}, or null.
   */
  synchronized Request firstConflict(long inode, long token, LockMode held) {
    Map<Long, Request> queue = byInode.get(inode);
    Request first = null;
    for (Request r : queue == null ? java.util.List.<Request>of() : queue.values()) {
      if (r.createRevision() > token && r.mode().conflictsWith(held)
          && (first == null || r.createRevision() < first.createRevision())) {
        first = r;
      }
    }
    return first;
  }

  /** How many keys {@code inode}'s queue has: for tests. */
  synchronized int queued(long inode) {
    Map<Long, Request> queue = byInode.get(inode);
    return queue == null ? 0 : queue.size();
  }

  /** How many inodes have a lock key: for tests and the log. */
  synchronized int inodes() {
    return byInode.size();
  }
}

package io.etcfs.lock.etcd.internal;

import io.etcfs.spi.lock.LockMode;
import java.util.HashMap;
import java.util.Map;

/**
 * Every inode lock key of the filesystem as this node's watch on {@code locks/} shows it: for
 * each inode, each session's request with its create revision, mode, whether its holder
 * declared itself clean, and its mod revision. The first request in create-revision order is
 * the holder (a shared first request may share with shared ones behind it; an exclusive first
 * request holds alone). Rebuilt from a full read whenever the watch (re)starts, then kept by its
 * events.
 */
final class LockTable {
  /** One request: {@code clean} only for an exclusive holder that committed everything. */
  record Request(long lease, long createRevision, LockMode mode, boolean clean,
      long modRevision) {}

  private final Map<Long, Map<Long, Request>> byInode = new HashMap<>();
  /**
   * Per inode, the revision at which an exclusive request last went (the most recent 4096
   * inodes): what that holder committed precedes it, so a cache that has reached it shows it.
   */
  private final Recent exclusiveGone = new Recent(4096);

  synchronized void clear() {
    byInode.clear();
  }

  synchronized void put(long inode, Request r) {
    byInode.computeIfAbsent(inode, i -> new HashMap<>()).put(r.lease(), r);
  }

  /** A request's key deleted at {@code revision}. */
  synchronized void delete(long inode, long lease, long revision) {
    Map<Long, Request> queue = byInode.get(inode);
    Request gone = queue == null ? null : queue.remove(lease);
    if (gone != null && gone.mode() == LockMode.EXCLUSIVE) {
      exclusiveGone.put(inode, revision);
    }
    if (queue != null && queue.isEmpty()) {
      byInode.remove(inode);
    }
  }

  /** The revision at which {@code inode}'s last exclusive request went, or 0 if not known. */
  synchronized long exclusiveGoneAt(long inode) {
    return exclusiveGone.get(inode, 0);
  }

  /** The exclusive holder of {@code inode} (first in line and exclusive), or null if none. */
  synchronized Request exclusiveHolder(long inode) {
    Map<Long, Request> queue = byInode.get(inode);
    if (queue == null) {
      return null;
    }
    Request first = null;
    for (Request r : queue.values()) {
      if (first == null || r.createRevision() < first.createRevision()) {
        first = r;
      }
    }
    return first != null && first.mode() == LockMode.EXCLUSIVE ? first : null;
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

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
final class LockView {
  /** One request: {@code clean} only for an exclusive holder that committed everything. */
  record Request(long lease, long createRevision, LockMode mode, boolean clean,
      long modRevision) {}

  private final Map<Long, Map<Long, Request>> byInode = new HashMap<>();
  /**
   * Per inode, the revision at which an exclusive request last went (the most recent 4096
   * inodes): what that holder committed precedes it, so a cache that has reached it shows it.
   */
  private final Recent exclusiveGone = new Recent(4096);
  /**
   * A revision no exclusive request this table does not remember went after: the full read the
   * table was last rebuilt from. A holder that went before that read, while no watch ran, left
   * no event here, and its commits precede the read.
   */
  private long rebuiltAt;

  /** Starts over from a full read of every lock key at {@code revision} (put them next). */
  synchronized void rebuild(long revision) {
    byInode.clear();
    rebuiltAt = Math.max(rebuiltAt, revision);
  }

  /** A request's key put; an exclusive one rewritten shared (a downgrade) went exclusive. */
  synchronized void put(long inode, Request r) {
    Request before = byInode.computeIfAbsent(inode, i -> new HashMap<>()).put(r.lease(), r);
    if (before != null && before.mode() == LockMode.EXCLUSIVE && r.mode() == LockMode.SHARED) {
      exclusiveGone.put(inode, r.modRevision());
    }
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

  /**
   * A revision at or after the one at which {@code inode}'s last exclusive request went: its own
   * if remembered; else the newest one forgotten (more than 4096 inodes released since) or the
   * table's last rebuild, whichever is newer — a bound that is old, so a cache is past it
   * already, but never 0 once the table was read, for a holder that went unseen.
   */
  synchronized long exclusiveGoneAt(long inode) {
    long own = exclusiveGone.get(inode, 0);
    return own > 0 ? own : Math.max(rebuiltAt, exclusiveGone.forgotten());
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
   * What another session's requests on {@code inode} say of its attributes. Null: no session
   * but {@code own} has an exclusive request. The clean holder: the only such request is the
   * holder, which declared everything committed. Otherwise the first exclusive request of
   * another session that is not a clean holder — one that may have buffered changes, or, still
   * waiting, may be granted and its write() return at any moment: the requests ahead of it go
   * in deletes that another node's watch can show before this one's (a stat here must not
   * answer from a cache that shows neither its grant nor those deletes).
   */
  synchronized Request writerElsewhere(long inode, long own) {
    Map<Long, Request> queue = byInode.get(inode);
    if (queue == null) {
      return null;
    }
    Request first = first(queue);
    Request found = null;
    for (Request r : queue.values()) {
      if (r.mode() != LockMode.EXCLUSIVE || r.lease() == own) {
        continue;
      }
      if (r != first || !r.clean()) {
        return r;
      }
      found = r;
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

package io.etcfs.lock.etcd.internal;

import io.etcfs.spi.lock.LockMode;
import java.util.HashMap;
import java.util.Map;

/**
 * Every inode lock key of the filesystem as this node's watch on {@code locks/} shows it: for
 * each inode, each session's request with its create revision and mode. The first request in
 * create-revision order is the holder (a shared first request may share with shared ones behind
 * it; an exclusive first request holds alone), which is all {@link #exclusiveHolder} needs.
 * Rebuilt from a full read whenever the watch (re)starts, then kept by its events.
 */
final class LockTable {
  private record Request(long createRevision, LockMode mode) {}

  private final Map<Long, Map<Long, Request>> byInode = new HashMap<>();

  synchronized void clear() {
    byInode.clear();
  }

  synchronized void put(long inode, long lease, long createRevision, LockMode mode) {
    byInode.computeIfAbsent(inode, i -> new HashMap<>())
        .put(lease, new Request(createRevision, mode));
  }

  synchronized void delete(long inode, long lease) {
    Map<Long, Request> queue = byInode.get(inode);
    if (queue != null && queue.remove(lease) != null && queue.isEmpty()) {
      byInode.remove(inode);
    }
  }

  /**
   * The session holding {@code inode} exclusively (its request is first in line and
   * exclusive), or 0 if none does.
   */
  synchronized long exclusiveHolder(long inode) {
    Map<Long, Request> queue = byInode.get(inode);
    if (queue == null) {
      return 0;
    }
    long first = 0;
    Request firstRequest = null;
    for (Map.Entry<Long, Request> e : queue.entrySet()) {
      if (firstRequest == null || e.getValue().createRevision() < firstRequest.createRevision()) {
        first = e.getKey();
        firstRequest = e.getValue();
      }
    }
    return firstRequest != null && firstRequest.mode() == LockMode.EXCLUSIVE ? first : 0;
  }

  /** How many inodes have a lock key: for tests and the log. */
  synchronized int inodes() {
    return byInode.size();
  }
}

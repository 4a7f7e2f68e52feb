package io.etcfs.lock.hazelcast.internal;

import io.etcfs.spi.lock.LockMode;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongPredicate;

/**
 * One inode's lock queue, the value of the backend's lock map: requests in arrival order, each
 * granted or waiting. An exclusive request is granted when it is first; a shared one when every
 * request before it is shared — first come, first served, so a stream of readers cannot starve a
 * writer. Every change is made by an entry processor on the entry's partition owner, one at a
 * time per inode, so the queue is the one place that decides; this class is only its rules, kept
 * free of Hazelcast so they can be tested alone.
 *
 * <p>A grant's fencing token is {@code max(last + 1, now << 20)}: strictly increasing while the
 * entry exists, and an emptied queue is kept (a tombstone holding its last token) for a while
 * before it goes, so a queue created afresh starts from a time far beyond any token of the one
 * before (see {@link Processors#TOMBSTONE_MILLIS}).
 */
final class LockQueue implements Serializable {
  private static final long serialVersionUID = 1L;
  /** Grants per millisecond a token can count before it would reach the next millisecond's. */
  static final int TIME_SHIFT = 20;

  /** One request: a session's, in one mode. */
  record Request(long session, String node, LockMode mode, long token) implements Serializable {
    boolean granted() {
      return token != 0;
    }

    Request grant(long t) {
      return new Request(session, node, mode, t);
    }
  }

  private final List<Request> requests;
  private final long lastToken;

  LockQueue(List<Request> requests, long lastToken) {
    this.requests = List.copyOf(requests);
    this.lastToken = lastToken;
  }

  static LockQueue empty() {
    return new LockQueue(List.of(), 0);
  }

  List<Request> requests() {
    return requests;
  }

  long lastToken() {
    return lastToken;
  }

  boolean isEmpty() {
    return requests.isEmpty();
  }

  /** The request of {@code session}, or null. */
  Request of(long session) {
    for (Request r : requests) {
      if (r.session() == session) {
        return r;
      }
    }
    return null;
  }

  /**
   * The queue with {@code session}'s request in {@code mode} added at the end (a request of the
   * session already there is kept as it is: one request per session), and grants given.
   */
  LockQueue request(long session, String node, LockMode mode, long nowMillis) {
    if (of(session) != null) {
      return this;
    }
    List<Request> next = new ArrayList<>(requests);
    next.add(new Request(session, node, mode, 0));
    return granted(next, nowMillis);
  }

  /** The queue without the request of {@code session} (granted or not), and grants given. */
  LockQueue remove(long session, long nowMillis) {
    return removeIf(s -> s == session, nowMillis);
  }

  /** The queue without the requests of sessions {@code gone} says are gone. */
  LockQueue removeIf(LongPredicate gone, long nowMillis) {
    List<Request> next = new ArrayList<>(requests.size());
    for (Request r : requests) {
      if (!gone.test(r.session())) {
        next.add(r);
      }
    }
    return next.size() == requests.size() ? this : granted(next, nowMillis);
  }

  /**
   * The queue with {@code session}'s waiting request removed, or as it is if that request was
   * granted meanwhile (the requester then holds the lock after all).
   */
  LockQueue withdraw(long session, long nowMillis) {
    Request r = of(session);
    return r == null || r.granted() ? this : remove(session, nowMillis);
  }

  /** Grants every request the rules allow, in order, each with the next token. */
  private LockQueue granted(List<Request> next, long nowMillis) {
    long last = lastToken;
    boolean onlyShared = true;
    for (int i = 0; i < next.size(); i++) {
      Request r = next.get(i);
      boolean grantable = r.mode() == LockMode.EXCLUSIVE ? i == 0 : onlyShared;
      if (!r.granted() && grantable) {
        last = Math.max(last + 1, nowMillis << TIME_SHIFT);
        next.set(i, r.grant(last));
      }
      onlyShared &= r.mode() == LockMode.SHARED;
      if (!onlyShared) {
        break;
      }
    }
    return new LockQueue(next, last);
  }

  /**
   * The first request of another session that conflicts with {@code session}'s granted
   * request and waits behind it, or null: what a holder is recalled for.
   */
  Request conflictBehind(long session) {
    Request mine = of(session);
    if (mine == null || !mine.granted()) {
      return null;
    }
    for (Request r : requests) {
      if (r.session() != session && !r.granted()
          && (r.mode() == LockMode.EXCLUSIVE || mine.mode() == LockMode.EXCLUSIVE)) {
        return r;
      }
    }
    return null;
  }

  /**
   * The first request of another session than {@code session} that is granted in a mode that
   * conflicts with {@code mode}, or that waits exclusively ahead: what keeps a request waiting.
   */
  List<Request> blockers(long session) {
    List<Request> ahead = new ArrayList<>();
    for (Request r : requests) {
      if (r.session() == session) {
        break;
      }
      ahead.add(r);
    }
    return ahead;
  }

  @Override
  public String toString() {
    return requests + " last " + Long.toHexString(lastToken);
  }
}

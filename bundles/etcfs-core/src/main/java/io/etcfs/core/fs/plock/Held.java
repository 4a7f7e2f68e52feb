package io.etcfs.core.fs.plock;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which owner keys this node may have in etcd. libfuse unlocks on every close of every file
 * (lock(F_UNLCK) from flush, the flock_release bit on release); an owner that never locked must
 * not pay an etcd read for that.
 *
 * <p>Each attempt to put a key first marks it with a fresh token; a change that leaves the owner
 * with nothing forgets the key only if the token it started with is still the current one, so a
 * lock set concurrently by another thread of the same owner is never forgotten (at worst a key
 * that is gone stays marked, which costs one read at the next unlock).
 */
final class Held {
  private final Map<String, Object> tokens = new ConcurrentHashMap<>();

  /** Marks {@code key} as possibly held, before a commit that may put it. */
  void mark(String key) {
    tokens.put(key, new Object());
  }

  /** The key's current token, or null if this node certainly holds nothing under it. */
  Object token(String key) {
    return tokens.get(key);
  }

  void forget(String key, Object token) {
    if (token != null) {
      tokens.remove(key, token);
    }
  }

  int size() {
    return tokens.size();
  }
}

package io.etcfs.alloc.arena.internal;

import io.etcfs.spi.alloc.NoSpaceException;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.MetaStoreException;
import io.etcfs.spi.meta.Watch;
import io.etcfs.spi.meta.WatchEvent;
import io.etcfs.spi.meta.WatchListener;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Space other nodes hold but do not use (issue 12). A node that runs out — its arenas full or
 * promised, no arena unclaimed — puts {@code wants/<node>}; every other node watches {@code
 * wants/} and lets go of the arenas it can spare ({@link ArenaClaimer#releaseSpare}); the asking
 * node claims them as their claims disappear and deletes its want when it has the space or gives
 * up. No arena is ever taken from a node: only its owner deletes its claim, and only with nothing
 * in flight in it, so invariant 1 rests on the claim and the reverse map exactly as for an idle
 * release, and a fenced node (whose guarded txns fail) neither asks nor gives.
 */
final class SpaceRequests implements WatchListener {
  /** An allocation or a promise that may run out of space. */
  interface SpaceOp<T> {
    T run() throws NoSpaceException;
  }

  private static final Logger LOG = System.getLogger(SpaceRequests.class.getName());
  /** How often an asking node looks for released claims: a cheap range read. */
  private static final long POLL_MS = 10;
  /**
   * After an ask nobody answered, the next one waits this long unless the device's free space
   * grew meanwhile: a full device answers ENOSPC at once, not after a wait per write.
   */
  private static final long QUIET_NANOS = TimeUnit.SECONDS.toNanos(1);

  private final MetaStore store;
  private final ArenaKeys keys;
  private final Claims claims;
  private final ArenaTable table;
  private final ArenaClaimer claimer;
  private final Executor executor;
  private final String nodeName;
  private final long waitNanos;
  private final AtomicInteger asking = new AtomicInteger();
  private volatile Watch watch;
  private volatile boolean closed;
  private long failedAt;
  private long freeAtFailure = -1;

  SpaceRequests(MetaStore store, ArenaKeys keys, Claims claims, ArenaTable table,
      ArenaClaimer claimer, Executor executor, String nodeName, long waitMillis) {
    this.store = store;
    this.keys = keys;
    this.claims = claims;
    this.table = table;
    this.claimer = claimer;
    this.executor = executor;
    this.nodeName = nodeName;
    this.waitNanos = TimeUnit.MILLISECONDS.toNanos(waitMillis);
  }

  /** Watches other nodes' wants from now on; earlier ones were asked before this node had any. */
  void start() {
    long revision = store.prefix(keys.wantsPrefix(), 1).revision();
    Watch w = store.watch(keys.wantsPrefix(), revision + 1, this);
    watch = w;
    if (closed) {
      w.close();
    }
  }

  void close() {
    closed = true;
    Watch w = watch;
    if (w != null) {
      w.close();
    }
  }

  /**
   * Runs {@code op}; if it runs out of space while the mirror shows free blocks in other nodes'
   * arenas, asks them and runs it again as their claims go, until it succeeds or the wait ends.
   */
  <T> T withSpace(long blocks, SpaceOp<T> op) throws NoSpaceException {
    try {
      return op.run();
    } catch (NoSpaceException first) {
      if (!worthAsking()) {
        throw first;
      }
      return askAndRetry(blocks, op, first);
    }
  }

  private <T> T askAndRetry(long blocks, SpaceOp<T> op, NoSpaceException first)
      throws NoSpaceException {
    long deadline = System.nanoTime() + waitNanos;
    asking.incrementAndGet();
    try {
      if (!claims.ask(blocks)) {
        throw first;
      }
      NoSpaceException last = first;
      while (awaitClaimable(deadline)) {
        try {
          return op.run();
        } catch (NoSpaceException e) {
          last = e;
        }
      }
      gaveUp();
      throw new NoSpaceException(last.getMessage() + "; the other nodes had none to spare within "
          + TimeUnit.NANOSECONDS.toMillis(waitNanos) + " ms");
    } finally {
      if (asking.decrementAndGet() == 0) {
        withdraw(); // the want is this node's, shared by every thread asking at once
      }
    }
  }

  private synchronized boolean worthAsking() {
    long free = table.freeElsewhere();
    return free > 0 && (freeAtFailure < 0 || free > freeAtFailure
        || System.nanoTime() - failedAt > QUIET_NANOS);
  }

  private synchronized void gaveUp() {
    failedAt = System.nanoTime();
    freeAtFailure = table.freeElsewhere();
  }

  /** Polls the claims until one this node could take appears, or the deadline passes. */
  private boolean awaitClaimable(long deadline) {
    while (!closed) {
      if (claimer.claimable()) {
        return true;
      }
      if (System.nanoTime() >= deadline) {
        return false;
      }
      try {
        Thread.sleep(POLL_MS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
    return false;
  }

  private void withdraw() {
    try {
      claims.withdraw();
    } catch (RuntimeException e) {
      // Harmless if left: the others act on a want's events, not on its existence.
      LOG.log(Level.WARNING, "could not withdraw this node's want: " + e.getMessage());
    }
  }

  @Override
  public void onEvents(List<WatchEvent> events) {
    Set<String> asking = new TreeSet<>();
    for (WatchEvent e : events) {
      String node = keys.wantNode(e.kv().key());
      if (e.type() == WatchEvent.Type.PUT && node != null && !node.equals(nodeName)) {
        asking.add(node);
      }
    }
    if (!asking.isEmpty() && !closed) {
      try {
        executor.execute(() -> give(asking));
      } catch (RejectedExecutionException e) {
        // stopping
      }
    }
  }

  /**
   * Gives only to a node still asking: one that has withdrawn got its space or gave up, and
   * releasing for it would only cost this node a claim later. A node asking at the same time
   * needs its spare space itself.
   */
  private void give(Set<String> nodes) {
    if (closed || asking.get() > 0) {
      return;
    }
    try {
      if (nodes.stream().noneMatch(n -> store.get(keys.want(n)).isPresent())) {
        return;
      }
      int released = claimer.releaseSpare();
      LOG.log(Level.INFO, "another node is out of space: released {0} spare arena(s)", released);
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "could not release spare arenas: " + e.getMessage());
    }
  }

  @Override
  public void onError(MetaStoreException error) {
    if (closed) {
      return;
    }
    LOG.log(Level.WARNING, "watch on wants ended (" + error.getMessage() + "); restarting it");
    try {
      executor.execute(this::restart);
    } catch (RejectedExecutionException e) {
      // stopping
    }
  }

  /** A want missed meanwhile costs its node only its wait. */
  private void restart() {
    try {
      if (!closed) {
        start();
      }
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "restarting the watch on wants failed; retrying: " + e.getMessage());
      executor.execute(this::restart);
    }
  }
}

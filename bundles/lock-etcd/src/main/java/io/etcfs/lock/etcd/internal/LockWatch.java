package io.etcfs.lock.etcd.internal;

import static io.etcfs.lock.etcd.internal.LockKeys.mode;
import static io.etcfs.lock.etcd.internal.LockKeys.str;

import io.etcfs.spi.lock.LockMode;
import io.etcfs.spi.lock.LockService.Writer;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.MetaStoreException;
import io.etcfs.spi.meta.RangeResult;
import io.etcfs.spi.meta.Watch;
import io.etcfs.spi.meta.WatchEvent;
import io.etcfs.spi.meta.WatchListener;
import java.lang.System.Logger.Level;
import java.lang.System.Logger;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The one watch on {@code locks/}, serving both sides: a waiter re-reads its inode's queue when
 * it changes, and a holder that sees a conflicting key queued behind its own is recalled. Keeps
 * the lock table ({@link LockView}) from a full read at each (re)start and then every event, and
 * answers {@link #writerElsewhere} from it; tells the core's listener of writers elsewhere.
 */
final class LockWatch implements WatchListener {
  private static final Logger LOG = System.getLogger(EtcdLockService.class.getName());

  private final MetaStore store;
  private final LockKeys codec;
  /** Every lock key of the filesystem, from the watch (for {@link #writerElsewhere}). */
  private final LockView table;
  private final NodeLocks locks;
  private final Map<Long, Held> held;
  private final Map<Long, InodeState> inodes;
  private final Recalls recalls;
  private final Releases releases;
  private final ScheduledExecutorService timer;
  private final ExecutorService recallPool;
  /** The newest revision the watch has shown: its start's full read, then each event's. */
  private final AtomicLong applied = new AtomicLong();
  /** Bumped each time the watch (re)starts: waiters then read their queue again. */
  private volatile long restarts;
  /** Told of another session's exclusive key ({@link #watchExclusive}). */
  private volatile java.util.function.LongConsumer exclusiveListener;
  private volatile Watch watch;

  LockWatch(MetaStore store, LockKeys codec, LockView table, NodeLocks locks, Recalls recalls,
      Releases releases, ScheduledExecutorService timer, ExecutorService recallPool) {
    this.store = store;
    this.codec = codec;
    this.table = table;
    this.locks = locks;
    this.held = locks.held;
    this.inodes = locks.inodes;
    this.recalls = recalls;
    this.releases = releases;
    this.timer = timer;
    this.recallPool = recallPool;
  }

  /** How many times the watch has (re)started: a waiter that sees it change reads again. */
  long restarts() {
    return restarts;
  }

  void start() {
    if (locks.closed()) {
      return;
    }
    try {
      byte[] p = codec.all();
      // The whole lock table at one revision, then every change after it: what
      // writerElsewhere answers from. Lock keys are few (one per lock held or awaited in
      // the cluster; idle locks are given back), so the read is small.
      RangeResult all = store.prefix(p, 0);
      synchronized (table) {
        table.rebuild();
        for (KeyValue kv : all.kvs()) {
          LockKeys.Parts il = codec.parse(kv.keyString());
          if (il != null) {
            LockView.Request r = request(il.lease(), kv);
            table.put(il.inode(), r);
            // what a writer did while no watch ran shows through the metadata watch; one
            // writing now is told as its key would have been
            tellExclusive(il.inode(), il.lease(), r);
          }
        }
      }
      long now = all.revision();
      applied.accumulateAndGet(now, Math::max);
      watch = store.watch(p, now + 1, this);
      // Whatever happened while no watch ran: every waiter reads its queue again, and every
      // holder looks for conflicting requests queued behind it.
      restarts++;
      locks.wakeAll();
      for (Held h : held.values()) {
        RangeResult queue = store.prefix(codec.inode(h.lock.inode()), 0);
        recalls.recallIfWanted(h, queue.kvs());
      }
    } catch (MetaStoreException e) {
      LOG.log(Level.WARNING, "lock watch not running ({0}); retrying", e.getMessage());
      timer.schedule(this::start, 200, TimeUnit.MILLISECONDS);
    }
  }

  @Override
  public void onEvents(List<WatchEvent> events) {
    long newest = 0;
    for (WatchEvent e : events) {
      newest = Math.max(newest, e.kv().modRevision());
      LockKeys.Parts il = codec.parse(e.kv().keyString());
      if (il == null) {
        continue;
      }
      long inode = il.inode();
      long lease = il.lease();
      if (e.type() == WatchEvent.Type.DELETE) {
        table.delete(inode, lease);
      } else {
        LockView.Request r = request(lease, e.kv());
        table.put(inode, r);
        tellExclusive(inode, lease, r);
      }
      InodeState state = inodes.get(inode);
      if (state != null) {
        state.lastEvent.accumulateAndGet(e.kv().modRevision(), Math::max);
      }
      Held h = held.get(inode);
      if (h == null) {
        if (e.type() == WatchEvent.Type.PUT && state == null
            && mode(e.kv()) == LockMode.EXCLUSIVE) {
          dropStray(inode);
        }
        continue;
      }
      if (lease == h.lock.sessionId()) {
        // A delete older than the lock's own key is of an earlier key of this session (one a
        // new request replaced: see queueAndWait), not of this lock's: the key came after it.
        if (e.type() == WatchEvent.Type.DELETE && e.kv().modRevision() > h.lock.fencingToken()
            && held.remove(inode, h)) {
          LOG.log(Level.WARNING, "lock on inode {0} vanished (its session lease ended)",
              Long.toHexString(inode));
        }
      } else if (e.type() == WatchEvent.Type.PUT
          && e.kv().createRevision() > h.lock.fencingToken()
          && mode(e.kv()).conflictsWith(h.lock.mode())) {
        h.waiters.add(e.kv().createRevision());
        recalls.recall(h, mode(e.kv()));
      }
    }
    // Only now, with the table showing these events: awaitApplied takes a revision here as a
    // promise about the table.
    applied.accumulateAndGet(newest, Math::max);
    locks.wakeAll();
  }

  /**
   * Another session's exclusive key: a writer that may buffer changes. Told before {@link
   * #applied} shows the event (so before {@link #writerElsewhere} answers from it).
   */
  private void tellExclusive(long inode, long lease, LockView.Request r) {
    java.util.function.LongConsumer listener = exclusiveListener;
    Session s = locks.current();
    if (listener == null || r.mode() != LockMode.EXCLUSIVE || (s != null && s.lease == lease)) {
      return;
    }
    try {
      listener.accept(inode);
    } catch (RuntimeException e) {
      LOG.log(Level.ERROR, "exclusive-lock listener failed for inode "
          + Long.toHexString(inode), e);
    }
  }

  void watchExclusive(java.util.function.LongConsumer listener) {
    exclusiveListener = listener;
  }

  /**
   * A shared request of this session on an inode this node neither holds nor is acquiring,
   * which an exclusive request now waits behind, is a stray: left by a request or prefetch whose
   * transaction's outcome was unknown and whose withdrawal failed too. Nobody would ever recall
   * it, so the writer would wait until the session ends; it is deleted instead (guarded by its
   * create revision, so a request of the same key made meanwhile stays). Exclusive keys are
   * left alone: a created lock's key is not adopted yet in the moment after its create.
   */
  private void dropStray(long inode) {
    Session s = locks.current();
    LockView.Request mine = s == null ? null : table.request(inode, s.lease);
    if (mine == null || mine.mode() != LockMode.SHARED) {
      return;
    }
    byte[] key = codec.key(inode, s.lease);
    LOG.log(Level.INFO, "dropping stray shared lock request {0}", str(key));
    recallPool.execute(() -> releases.abandon(key, mine.createRevision()));
  }

  /** Waits for the watch to have applied {@code revision}: woken by each batch it applies. */
  boolean awaitApplied(long revision, long timeoutMs) {
    return applied.get() >= revision || locks.waitFor(() -> applied.get() >= revision,
        System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs));
  }

  @Override
  public void onError(MetaStoreException error) {
    if (!locks.closed()) {
      LOG.log(Level.WARNING, "lock watch ended ({0}); restarting", error.getMessage());
      timer.schedule(this::start, 50, TimeUnit.MILLISECONDS);
    }
  }

  private static LockView.Request request(long lease, KeyValue kv) {
    return new LockView.Request(lease, kv.createRevision(), mode(kv), kv.modRevision());
  }

  /**
   * From the lock table this node's watch keeps: another session's exclusive request, granted
   * (first in line) or waiting. It trails etcd by the watch's delay (normally well under a
   * millisecond); while the watch is down it answers from the table as it last was. Waiting also
   * while this node is giving or just gave the lock back for a request its watch has not shown
   * yet (a writer's, whose write() may return at any moment). Asks nobody.
   */
  Writer writerElsewhere(long inode) {
    if (applied.get() < releases.releasedAt(inode)) {
      return Writer.WAITING;
    }
    Session s = locks.current();
    return table.writerElsewhere(inode, s == null ? 0 : s.id());
  }

  /** Closes the watch running now, if any. */
  void close() {
    Watch w = watch;
    if (w != null) {
      w.close();
    }
  }
}

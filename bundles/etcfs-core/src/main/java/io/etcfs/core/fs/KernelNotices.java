package io.etcfs.core.fs;

import io.etcfs.core.fs.meta.FsKeys;
import io.etcfs.spi.meta.WatchEvent;
import io.etcfs.spi.vfs.KernelCache;
import io.etcfs.support.collect.BoundedMaps;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Tells the front end's kernel cache ({@link KernelCache}) what the metadata watch shows another
 * node changed, and when this node is about to let an inode's lock go.
 *
 * <p>Watch events are handed to a thread of their own: the front end's invalidation of a name
 * takes the directory's lock in the kernel, which a create in that directory may hold while it
 * waits for the watch to reach its own commit — so the watch thread must never wait for it.
 * Changes this node committed itself (the revisions {@code TxRunner} reports) are not told for
 * names and directory times: the kernel made them, and already knows; an inode's record is
 * always told (cheap: attributes only).
 */
final class KernelNotices implements io.etcfs.core.fs.tx.TxRunner.CommitListener {
  private static final Logger LOG = Logger.getLogger(KernelNotices.class.getName());
  private static final int OWN_REVISIONS = 8192;
  /** The longest a notice waits for this node's commits in flight to name their revisions. */
  private static final long OWN_WAIT_MS = 2000;
  private final java.util.concurrent.atomic.AtomicLong sequence =
      new java.util.concurrent.atomic.AtomicLong();
  private final java.util.concurrent.ConcurrentSkipListSet<Long> pending =
      new java.util.concurrent.ConcurrentSkipListSet<>();

  private final FsKeys keys;
  private volatile KernelCache sink;
  private final Map<Long, Boolean> own = BoundedMaps.synchronizedOf(OWN_REVISIONS, false);
  private final ExecutorService thread = Executors.newSingleThreadExecutor(r -> {
    Thread t = new Thread(r, "etcfs-kernel-notices");
    t.setDaemon(true);
    return t;
  });

  KernelNotices(FsKeys keys) {
    this.keys = keys;
  }

  void setSink(KernelCache cache) {
    this.sink = cache;
  }

  boolean active() {
    return sink != null;
  }

  @Override
  public long begin() {
    if (sink == null) {
      return 0; // nobody to tell: no bookkeeping
    }
    long seq = sequence.incrementAndGet();
    pending.add(seq);
    return seq;
  }

  @Override
  public void end(long seq, long revision) {
    if (seq == 0) {
      return;
    }
    if (revision > 0) {
      own.put(revision, Boolean.TRUE);
    }
    pending.remove(seq);
    synchronized (pending) {
      pending.notifyAll();
    }
  }

  /**
   * Before telling whether a change was this node's: the watch may deliver a commit's event
   * before the commit's answer names its revision, so the commits in flight when the event
   * came must end first (each within etcd's request timeout; bounded here anyway).
   */
  private void awaitCommitsThrough(long seq) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(OWN_WAIT_MS);
    synchronized (pending) {
      // ceiling, not isEmpty-then-first: end() removes outside this monitor, and first() on a
      // set emptied in between threw, which ended the task and lost its notices
      Long oldest;
      while ((oldest = pending.ceiling(Long.MIN_VALUE)) != null && oldest <= seq) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return; // told as another node's: an invalidation too many, never one too few
        }
        try {
          TimeUnit.NANOSECONDS.timedWait(pending, left);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }
  }

  /** A notice of one change: what it names, and the revision it came with. */
  private record Notice(char kind, long ino, String name, long revision) {}

  /** From the watch thread: queue what the events invalidate; never blocks. */
  void onEvents(List<WatchEvent> events) {
    if (sink == null) {
      return;
    }
    List<Notice> notices = new ArrayList<>();
    for (WatchEvent e : events) {
      String rel = keys.relative(e.kv().keyString());
      if (rel == null || rel.length() < 18 || rel.charAt(1) != '/') {
        continue;
      }
      long rev = e.kv().modRevision();
      char kind = rel.charAt(0);
      switch (kind) {
        case 'i', 'm' -> notices.add(new Notice(kind, parse(rel, 2), null, rev));
        case 'd' -> {
          // d/<dir 16 hex>/<hash 16 hex>/<name>
          if (rel.length() > 36 && rel.charAt(18) == '/' && rel.charAt(35) == '/') {
            notices.add(new Notice(kind, parse(rel, 2), rel.substring(36), rev));
          }
        }
        default -> { }
      }
    }
    if (notices.isEmpty()) {
      return;
    }
    long inFlight = sequence.get();
    try {
      thread.execute(() -> {
        awaitCommitsThrough(inFlight);
        deliver(notices);
      });
    } catch (RejectedExecutionException closed) {
      // shutting down: nothing is mounted any more
    }
  }

  private static long parse(String rel, int from) {
    try {
      return Long.parseUnsignedLong(rel.substring(from, from + 16), 16);
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  private void deliver(List<Notice> notices) {
    KernelCache s = sink;
    if (s == null) {
      return;
    }
    for (Notice n : notices) {
      if (n.ino() < 0) {
        continue;
      }
      try {
        switch (n.kind()) {
          case 'i' -> s.inodeChanged(n.ino());
          case 'm' -> {
            if (!own.containsKey(n.revision())) {
              s.inodeChanged(n.ino());
            }
          }
          case 'd' -> {
            if (!own.containsKey(n.revision())) {
              s.entryChanged(n.ino(), n.name());
            }
          }
          default -> { }
        }
      } catch (RuntimeException e) {
        LOG.log(Level.WARNING, "kernel cache notice for inode " + n.ino() + " failed", e);
      }
    }
  }

  /** Before this node lets go of {@code ino}'s lock; synchronous. */
  void lockGoing(long ino, boolean writeBack) {
    KernelCache s = sink;
    if (s != null) {
      try {
        s.lockGoing(ino, writeBack);
      } catch (RuntimeException e) {
        LOG.log(Level.WARNING, "kernel cache notice for inode " + ino + " failed", e);
      }
    }
  }

  void close() {
    sink = null;
    thread.shutdownNow();
  }
}

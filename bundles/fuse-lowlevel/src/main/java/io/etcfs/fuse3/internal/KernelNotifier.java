package io.etcfs.fuse3.internal;

import io.etcfs.spi.vfs.KernelCache;
import io.etcfs.support.retry.Backoff;
import java.lang.System.Logger.Level;
import java.lang.System.Logger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The core's notices turned into libfuse 3's invalidations: a name another node changed is
 * dropped from the kernel's dentry cache ({@code fuse_lowlevel_notify_inval_entry}); an inode's
 * changed record, or a lock this node is letting go, drops the kernel's attributes of it
 * ({@code notify_inval_inode} with offset -1: no page is touched, so it never waits for a page
 * lock a request holds). Cached file data is dropped elsewhere, by a request that finds the
 * inode's grant changed ({@link LowLevelOps}).
 *
 * <p>Calls never come from inside a request on the same directory (the core sends name notices
 * from a thread of its own), which libfuse requires: an entry invalidation takes the
 * directory's lock in the kernel.
 */
final class KernelNotifier implements KernelCache {
  private static final Logger LOG = System.getLogger(KernelNotifier.class.getName());
  private static final int ENOENT = 2;

  private final Libfuse3 lib;
  private final ReadWriteLock open = new ReentrantReadWriteLock();
  private final ThreadLocal<ByteBuffer> names =
      ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(1024));
  private long session;
  /** Repeats of {@link #attributesAgain} while the kernel does not know the inode yet. */
  private final java.util.concurrent.ScheduledExecutorService again =
      java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "etcfs-fuse3-attributes-again");
        t.setDaemon(true);
        return t;
      });

  KernelNotifier(Libfuse3 lib, long session) {
    this.lib = lib;
    this.session = session;
  }

  @Override
  public void entryChanged(long dir, String name) {
    byte[] utf8 = name.getBytes(StandardCharsets.UTF_8);
    if (utf8.length >= 1024) {
      return;
    }
    ByteBuffer b = names.get();
    long address = Mem.address(b);
    open.readLock().lock();
    try {
      if (session != 0) {
        Mem.putString(address, utf8);
        report("entry " + dir + "/" + name,
            lib.fuse_lowlevel_notify_inval_entry(session, dir, address, utf8.length));
      }
    } finally {
      open.readLock().unlock();
    }
  }

  @Override
  public void inodeChanged(long ino) {
    attributes(ino);
  }

  /**
   * An exclusive lock let go in order: pages dirtied through a shared mapping are written back
   * (under the lock still held: the core serves those writes without waiting) and every cached
   * page dropped; otherwise the attributes only, which never waits for a page.
   */
  @Override
  public void lockGoing(long ino, boolean writeBack) {
    if (writeBack) {
      pages(ino);
    } else {
      attributes(ino);
    }
  }

  /** Drops the kernel's attributes of {@code ino}; never waits for a page. */
  void attributes(long ino) {
    report("inode " + ino, invalidate(ino));
  }

  /**
   * Drops the kernel's attributes of {@code ino} again after a reply that let it keep them may
   * have overtaken their invalidation. A reply to a lookup of an inode the kernel does not know
   * yet creates the inode when the requesting task runs, which may be after this call, and an
   * invalidation of an inode the kernel does not know finds nothing (ENOENT); so it is repeated,
   * 1, 2, 4 … ms apart, until the kernel knows the inode or {@code seconds} (the attribute
   * timeout: by then the attributes have expired anyway) have passed.
   */
  void attributesAgain(long ino, double seconds) {
    long deadline = System.nanoTime() + (long) (seconds * 1e9);
    if (invalidate(ino) == -ENOENT) {
      repeat(ino, deadline, 1);
    }
  }

  /** Between tries of an invalidation the kernel refused: 1 ms, doubling to 64 ms. */
  private static final Backoff AGAIN = new Backoff(Duration.ofMillis(1), Duration.ofMillis(64));

  private void repeat(long ino, long deadline, int tries) {
    long delayMs = AGAIN.delay(tries).toMillis();
    if (System.nanoTime() + delayMs * 1_000_000 - deadline > 0) {
      return;
    }
    try {
      again.schedule(() -> {
        if (invalidate(ino) == -ENOENT) {
          repeat(ino, deadline, tries + 1);
        }
      }, delayMs, java.util.concurrent.TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.RejectedExecutionException closed) {
      // the session is closing: nothing is cached any more
    }
  }

  /** The kernel's answer to dropping {@code ino}'s attributes; 0 once the session is gone. */
  private int invalidate(long ino) {
    open.readLock().lock();
    try {
      return session == 0 ? 0 : lib.fuse_lowlevel_notify_inval_inode(session, ino, -1, 0);
    } finally {
      open.readLock().unlock();
    }
  }

  /**
   * Writes back and drops the kernel's cached pages (and attributes) of {@code ino}. It waits
   * for pages that requests in flight hold: call it only from a request's worker that holds
   * nothing those requests need.
   */
  void pages(long ino) {
    open.readLock().lock();
    try {
      if (session != 0) {
        report("pages of " + ino, lib.fuse_lowlevel_notify_inval_inode(session, ino, 0, 0));
      }
    } finally {
      open.readLock().unlock();
    }
  }

  private static void report(String what, int result) {
    if (result != 0 && result != -ENOENT) {
      LOG.log(Level.DEBUG, "kernel invalidation of {0}: errno {1}", what, -result);
    }
  }

  /** No more invalidations: the session is about to be freed. */
  void close() {
    again.shutdownNow();
    open.writeLock().lock();
    try {
      session = 0;
    } finally {
      open.writeLock().unlock();
    }
  }
}

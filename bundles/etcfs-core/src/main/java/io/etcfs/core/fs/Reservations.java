package io.etcfs.core.fs;

import io.etcfs.spi.alloc.NoSpaceException;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Logger;

/**
 * Space promised to buffered writes, as ext4's delayed allocation does: a write reserves one
 * device block for every block it adds to a file's buffer before it is accepted, so the write
 * that cannot be stored is the one that fails with ENOSPC, and a flush spends the promise and
 * cannot run out of space. Allocate-on-write needs a fresh block for an overwrite too, so every
 * buffered block counts, new or not. Each file keeps the count it holds ({@code
 * FileData.reservedBlocks}, under the file's lock): normally one per buffered block; less only
 * after a commit whose outcome is unknown (its blocks stay allocated, never freed twice).
 */
final class Reservations {
  private static final Logger LOG = Logger.getLogger(Reservations.class.getName());
  /** A full device is logged once, not once per write: again after this long. */
  private static final long QUIET_NANOS = TimeUnit.SECONDS.toNanos(10);
  private final Ctx ctx;
  private final AtomicLong loggedAt = new AtomicLong();

  Reservations(Ctx ctx) {
    this.ctx = ctx;
  }

  /** Before {@code blocks} new blocks join {@code f}'s buffer. */
  void reserve(FileData f, long blocks) throws FsException {
    if (blocks <= 0) {
      return;
    }
    try {
      ctx.allocator().reserve(blocks);
    } catch (NoSpaceException e) {
      long t0 = System.nanoTime();
      if (!ctx.releasing.awaitOthers(f.ino)) {
        throw noSpace(f, blocks, e, "nothing was being freed");
      }
      try {
        ctx.allocator().reserve(blocks); // a release that freed space may have finished
      } catch (NoSpaceException again) {
        throw noSpace(f, blocks, again, "still none after waiting "
            + (System.nanoTime() - t0) / 1_000_000 + " ms for the files being freed here");
      }
    }
    f.reservedBlocks += blocks;
  }

  /** The ENOSPC a write answers, logged. */
  private FsException noSpace(FileData f, long blocks, NoSpaceException e, String waited) {
    return logged(new FsException(Errno.ENOSPC, "no space to buffer " + blocks
        + " blocks of inode " + f.ino + ": " + e.getMessage() + "; " + waited));
  }

  /** Logs an ENOSPC answered here, at most once in {@link #QUIET_NANOS}; returns it. */
  FsException logged(FsException noSpace) {
    long now = System.nanoTime();
    long last = loggedAt.get();
    // another file's ENOSPC is logged at once: a full device's writer is quiet, the next
    // file's answer (the one a test or an operator asks about) is not hidden behind it
    java.util.regex.Matcher m = INODE.matcher(String.valueOf(noSpace.getMessage()));
    String about = m.find() ? m.group() : "";
    boolean other = !about.equals(loggedAbout);
    if ((last == 0 || other || now - last > QUIET_NANOS) && loggedAt.compareAndSet(last, now)) {
      loggedAbout = about;
      LOG.warning("answered ENOSPC: " + noSpace.getMessage());
    }
    return noSpace;
  }

  private volatile String loggedAbout = "";
  private static final java.util.regex.Pattern INODE = java.util.regex.Pattern.compile(
      "inode \\d+");

  /**
   * Gives back what no buffered block needs any more: blocks dropped by a truncate, by a lost
   * lock, at a close that could not commit them, or a write that failed after reserving.
   */
  void settle(FileData f) {
    long excess = f.reservedBlocks - f.dirty.size();
    if (excess <= 0) {
      return;
    }
    f.reservedBlocks -= excess;
    try {
      ctx.allocator().unreserve(excess);
    } catch (FsException e) {
      // no allocator bound: the promise went with the one that made it
    }
  }

  /** A flush about to allocate {@code blocks}: how many of them the file's promise covers. */
  long spend(FileData f, long blocks) {
    long spent = Math.min(blocks, f.reservedBlocks);
    f.reservedBlocks -= spent;
    return spent;
  }

  /**
   * A flush failed and gave back {@code abandoned} blocks: as many as the still buffered blocks
   * lack (at most those {@code spent}) go back into the file's promise.
   *
   * @return how many the allocator must keep promised
   */
  long refund(FileData f, long abandoned, long spent) {
    long keep = Math.max(0, Math.min(f.dirty.size() - f.reservedBlocks,
        Math.min(abandoned, spent)));
    f.reservedBlocks += keep;
    return keep;
  }
}

package io.etcfs.core.fs;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The node-wide bound on buffered write data: past it, a write flushes its own file first, so
 * memory stays bounded whatever the size of the files written.
 */
final class MemoryBudget {
  private final long limit;
  private final AtomicLong used = new AtomicLong();

  MemoryBudget(long limit) {
    this.limit = limit;
  }

  boolean wouldExceed(long bytes) {
    return used.get() + bytes > limit;
  }

  /** A single file may hold a quarter of the budget, so one writer cannot starve the rest. */
  boolean fileOver(long fileBytes) {
    return fileBytes > limit / 4;
  }

  void take(long bytes) {
    used.addAndGet(bytes);
  }

  void give(long bytes) {
    used.addAndGet(-bytes);
  }

  long used() {
    return used.get();
  }
}

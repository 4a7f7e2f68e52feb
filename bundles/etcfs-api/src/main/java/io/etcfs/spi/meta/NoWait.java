package io.etcfs.spi.meta;

import java.util.concurrent.Callable;

/**
 * A thread that must answer from memory or not at all: a FUSE front end tries a look-up or a
 * {@code getattr} on the thread that read the request (no hand-over to a worker, which costs
 * about a third of such a request's time), and hands it over only if answering would wait.
 * Such a thread must never wait — not on etcd, not on a lock, not on a watch catching up —
 * since the requests that would end the wait (the kernel's write-back during a recall) may
 * need that very thread. (A monitor held briefly over memory is not a wait in this sense.)
 *
 * <p>The contract, for every implementation in the path of such a call: a store call (every
 * {@link MetaStore} method that talks to the store) and every wait a bundle does on behalf of a
 * caller call {@link #check} first, which throws {@link WouldBlock} in a no-wait section. What
 * ran before the throw must leave nothing half done: only reads and caches run there. The
 * caller ({@link #call}) then hands the request to a thread that may wait, which does it all
 * again.
 */
public final class NoWait {
  private static final ThreadLocal<boolean[]> ACTIVE = ThreadLocal.withInitial(() -> new boolean[1]);
  /** Thrown often and caught at once: one instance, no stack trace. */
  private static final WouldBlock WOULD_BLOCK = new WouldBlock();

  /** The answer needs a wait this thread must not make; the caller retries where it may wait. */
  public static final class WouldBlock extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private WouldBlock() {
      super("would wait in a no-wait section", null, false, false);
    }
  }

  private NoWait() {}

  /** Whether the current thread is in a no-wait section. */
  public static boolean active() {
    return ACTIVE.get()[0];
  }

  /** Throws {@link WouldBlock} in a no-wait section: call before anything that may wait. */
  public static void check() {
    if (ACTIVE.get()[0]) {
      throw WOULD_BLOCK;
    }
  }

  /**
   * Runs {@code work} as a no-wait section.
   *
   * @return its result, or null if it would have waited (nothing was answered then)
   * @throws Exception what {@code work} throws, other than {@link WouldBlock}
   */
  public static <T> T call(Callable<T> work) throws Exception {
    boolean[] active = ACTIVE.get();
    if (active[0]) {
      return work.call(); // nested: the outer section decides
    }
    active[0] = true;
    try {
      return work.call();
    } catch (WouldBlock e) {
      return null;
    } finally {
      active[0] = false;
    }
  }
}

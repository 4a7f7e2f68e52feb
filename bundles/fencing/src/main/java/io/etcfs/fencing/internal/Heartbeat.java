package io.etcfs.fencing.internal;

import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * This node's device heartbeat: a beat into its own slot every period while it is a member. When
 * the node fences itself the beat says so ({@link Beat#FENCED}) and stops for good; a clean leave
 * ends with {@link Beat#LEFT}. A killed node's beat simply stops changing. A survivor reading the
 * slot can so tell a node that lost etcd but still reaches the disk (it wrote FENCED) from a dead
 * one (nothing changes), and waits for one of the two before anyone allocates in its arenas.
 *
 * <p>The fenced check runs right before each write, on the monotonic clock behind
 * {@code fenced}, so a node resumed after a long pause does not beat "live" after its deadline
 * unless it is paused again between the check and the write — the residual risk the grace period
 * and, on capable devices, persistent reservations cover.
 */
final class Heartbeat {
  private static final Logger LOG = System.getLogger(Heartbeat.class.getName());

  private final HeartbeatDevice device;
  private final int slot;
  private final String node;
  private final long generation;
  private final long periodNanos;
  private final BooleanSupplier fenced;
  private final Thread thread;
  private volatile boolean stopping;
  private long counter;
  private long lastWarning;

  Heartbeat(HeartbeatDevice device, int slot, String node, long generation, long periodMillis,
      BooleanSupplier fenced) {
    this.device = device;
    this.slot = slot;
    this.node = node;
    this.generation = generation;
    this.periodNanos = TimeUnit.MILLISECONDS.toNanos(periodMillis);
    this.fenced = fenced;
    this.thread = new Thread(this::run, "etcfs-heartbeat-" + node);
    thread.setDaemon(true);
  }

  int slot() {
    return slot;
  }

  /** Writes the first beat before returning, so the slot is ours before the node writes data. */
  void start() throws IOException {
    beat(Beat.LIVE);
    thread.start();
  }

  /** Wakes the beat thread now: the node was fenced and should say so at once. */
  void wake() {
    LockSupport.unpark(thread);
  }

  /** Stops beating and writes the final state ({@link Beat#LEFT} or {@link Beat#FENCED}). */
  void stop(int finalState) {
    stopping = true;
    LockSupport.unpark(thread);
    try {
      thread.join(TimeUnit.SECONDS.toMillis(5));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try {
      beat(finalState);
    } catch (IOException e) {
      LOG.log(Level.WARNING, "heartbeat slot {0} on {1}: cannot write the final {2} beat: {3}",
          slot, device, finalState == Beat.LEFT ? "left" : "fenced", e.getMessage());
    }
  }

  /** A crash, for tests: the thread stops without a final beat. */
  void halt() {
    stopping = true;
    LockSupport.unpark(thread);
    try {
      thread.join(TimeUnit.SECONDS.toMillis(5));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void run() {
    while (!stopping) {
      LockSupport.parkNanos(this, periodNanos);
      if (stopping) {
        return;
      }
      try {
        if (fenced.getAsBoolean()) {
          beat(Beat.FENCED);
          LOG.log(Level.WARNING, "heartbeat slot {0}: node fenced, heartbeat stopped", slot);
          return;
        }
        beat(Beat.LIVE);
      } catch (IOException e) {
        long now = System.nanoTime();
        if (now - lastWarning > TimeUnit.MINUTES.toNanos(1) || lastWarning == 0) {
          lastWarning = now;
          LOG.log(Level.WARNING, "heartbeat slot {0} on {1}: write failed: {2}", slot, device,
              e.getMessage());
        }
      }
    }
  }

  private synchronized void beat(int state) throws IOException {
    device.write(slot, new Beat(state, generation, ++counter, System.currentTimeMillis(), node));
  }
}

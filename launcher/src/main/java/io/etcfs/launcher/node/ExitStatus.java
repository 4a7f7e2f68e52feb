package io.etcfs.launcher.node;

/**
 * How a node's JVM ends, for whoever supervises it (systemd's {@code etcfs@.service} restarts on
 * failure but names {@link #FENCED} in {@code RestartPreventExitStatus=}). {@code etcfs mount
 * --foreground} exits with its node's status, so the unit sees these too.
 *
 * <ul>
 *   <li>{@link #LEFT} 0: stopped ({@code etcfs umount}, control request {@code stop}) and left the
 *       cluster cleanly: lease revoked, membership key and heartbeat slot deleted.
 *   <li>1: the CLI's own failures (a refused start, one line on standard error); a node never
 *       exits with it on purpose.
 *   <li>{@link #USAGE} 2: started without a spec file (bad usage; the CLI's bad usage is 2 too).
 *   <li>{@link #START_FAILED} 3: the node did not become whole; its last line says why.
 *   <li>{@link #FENCED} 4: the node had fenced itself (it could not prove its membership lease
 *       alive) and was then stopped. It never rejoined: a new generation needs a new start, and
 *       a supervisor must not make that start on its own, or a node that keeps losing etcd would
 *       join, fence and join again in a loop, each time a recovery for the others.
 *   <li>143 (128 + SIGTERM): stopped by SIGTERM, after the same clean leave as 0 (the JVM's own
 *       status for a signal it handled); a fenced node stopped so exits with {@link #FENCED}.
 * </ul>
 */
public final class ExitStatus {
  /** Stopped and left the cluster cleanly. */
  public static final int LEFT = 0;
  /** Bad usage of the node's main class. */
  public static final int USAGE = 2;
  /** The node did not become whole. */
  public static final int START_FAILED = 3;
  /** The node had fenced itself before it was stopped: restarting it must be a person's call. */
  public static final int FENCED = 4;
  /** SIGTERM: the JVM's status after a clean leave run by its shutdown hook. */
  public static final int SIGTERM = 128 + 15;

  private ExitStatus() {}

  /** The status of a node that was stopped, by whether its incarnation had fenced itself. */
  public static int ofStop(boolean fenced) {
    return fenced ? FENCED : LEFT;
  }
}

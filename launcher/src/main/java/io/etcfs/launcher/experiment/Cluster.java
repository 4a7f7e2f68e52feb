package io.etcfs.launcher.experiment;

import java.nio.file.Path;
import java.util.List;

/** The cluster an experiment drives: a local one it starts, or an existing one it is given. */
public interface Cluster {
  /** A switch the cluster could not make live, with the reason. */
  final class NotLive extends Exception {
    private static final long serialVersionUID = 1L;

    public NotLive(String reason) {
      super(reason);
    }
  }

  /**
   * A live switch as the nodes recorded it in etcd.
   *
   * @param epoch the switch epoch
   * @param firstStop epoch ms, the first node stopping
   * @param cutover epoch ms, the cutover
   * @param pauseMillis first node stopping to last resuming
   * @param nodes the nodes that took part, comma-separated
   * @param said what the asking side printed
   */
  record Switched(long epoch, long firstStop, long cutover, long pauseMillis, String nodes,
      String said) {}

  /** What it is, for the report. */
  String describe();

  /** The mounts of the nodes driven, node 1 first. */
  List<Path> mounts();

  /**
   * Makes the cluster run {@code s} at the start of a run: a local cluster is started afresh
   * with it; an existing one is switched live to it, before the run's clock starts.
   *
   * @return what the reader of the report must know about it, or an empty string
   */
  String begin(Strategy s) throws Exception;

  /** Ends a run: a local cluster is stopped; an existing one is left as it is. */
  void end() throws Exception;

  /** The strategy the cluster's record names now. */
  Strategy current() throws Exception;

  /** Switches {@code kind} ({@code lock} or {@code alloc}) to {@code to}, live. */
  Switched switchLive(String kind, String to) throws NotLive, Exception;

  /** Whether {@link #fresh} can replace the cluster (a local one). */
  boolean canStartFresh();

  /** Replaces the cluster by a new one with {@code s} (nothing survives). */
  void fresh(Strategy s) throws Exception;

  /** Kills node {@code node}'s process with SIGKILL and returns once it is gone. */
  void kill(int node) throws Exception;

  /** Mounts node {@code node} again after {@link #kill}, waiting until it serves. */
  void restart(int node) throws Exception;
}

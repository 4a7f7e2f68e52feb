package io.etcfs.launcher.experiment;

import java.io.IOException;

/** What each node's thread of a {@link Load} does, one operation at a time. */
interface Workload {
  /** Makes file set {@code fileSet} ready, before any worker uses it (from the runner). */
  void prepare(int fileSet) throws IOException;

  /**
   * One operation of node {@code node} (0-based) in {@code c}.
   *
   * @return whether an operation completed (false: nothing to do now, e.g. not its turn)
   */
  boolean op(int node, Load.Current c, Load load) throws IOException, InterruptedException;

  /** Lets go of what node {@code node} holds open (after a failure, or when it idles). */
  void reset(int node);
}

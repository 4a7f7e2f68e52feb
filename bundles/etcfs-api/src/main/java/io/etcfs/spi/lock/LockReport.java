package io.etcfs.spi.lock;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * What a lock backend shows of its locks, for the shell's {@code locks} (2.8): every backend
 * reports in these terms, so the command works with any of them without knowing one. Registered
 * beside the backend's {@link LockService}, with the same {@value LockService#BACKEND} property.
 */
@ConsumerType
public interface LockReport {
  /** Where one of this node's locks stands. */
  enum State {
    /** Asked for, not granted yet. */
    WAITING,
    /** Granted, held (cached) by this node. */
    HELD,
    /** Held, and asked back by another node: this node is flushing before it lets go. */
    RECALL_PENDING,
    /** Being given back. */
    RELEASING
  }

  /**
   * One lock of this node.
   *
   * @param inode the inode
   * @param mode the mode held or asked for
   * @param state where it stands
   * @param clean whether its holder has declared everything committed (exclusive locks)
   * @param token its fencing token (0 before the grant, where the backend gives none then)
   * @param since how long it has been held, or awaited
   * @param waiters conflicting requests of other nodes queued behind it; -1 if not known (a
   *     waiting request)
   * @param recalls recalls of this inode this node served, as far as the backend counts them
   */
  record LockState(long inode, LockMode mode, State state, boolean clean, long token,
      Duration since, int waiters, long recalls) {}

  /**
   * One lock request anywhere in the cluster, for {@code locks --all}.
   *
   * @param held whether it is granted (else queued)
   * @param clean whether the backend knows its holder declared everything committed (since 3.0
   *     that declaration is the core's inode fence: a backend's cluster view may not know it)
   * @param node the node that asked
   * @param session the session it was asked under, as the backend names it
   */
  record ClusterLock(long inode, LockMode mode, boolean held, boolean clean, String node,
      long token, String session) {}

  /** The backend's name, as {@link LockService#backend}. */
  String backend();

  /** This node's locks, held and awaited, by inode. */
  List<LockState> locks();

  /** What the backend counts, in display order (name → value), e.g. recalls served. */
  Map<String, String> counters();

  /**
   * Every lock request of the filesystem, held or queued, on every node, by inode and queue
   * order; empty if the backend cannot list them.
   */
  default Optional<List<ClusterLock>> cluster() {
    return Optional.empty();
  }
}

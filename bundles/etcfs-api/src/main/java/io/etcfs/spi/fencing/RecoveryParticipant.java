package io.etcfs.spi.fencing;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * A bundle's share of recovering a dead node: whatever that bundle keeps in etcd per node
 * (arena claims, orphans, POSIX-lock tables) and that a dead incarnation cannot clean up itself.
 *
 * <p>The elected recoverer calls every registered participant only after the dead node is known
 * to be cut off: its membership lease expired, the fence agent succeeded, its device heartbeat
 * stopped and the grace period passed. A call must be idempotent (a recoverer that dies midway is
 * replaced and the next one starts over) and must touch only what {@code dead} owned.
 */
@ConsumerType
public interface RecoveryParticipant {
  /** The name of the core's share: orphans, POSIX-lock tables, queued lock state (1.2). */
  String FILESYSTEM = "filesystem";

  /**
   * The name of the allocator's share, whichever allocator is in use: a dead node's
   * reservations and whatever else of its space it held (1.2).
   */
  String ALLOCATOR = "allocator";

  /**
   * A short name for logs and the fence record: the part's role ({@link #FILESYSTEM}, {@link
   * #ALLOCATOR}), not its implementation, so that the set of parts a recovery needs stays the
   * same when an implementation is swapped.
   */
  String name();

  /**
   * Takes back what {@code dead} held.
   *
   * @return one line saying what was done, for the fence record
   * @throws Exception if it could not finish; recovery is retried later
   */
  String recover(DeadNode dead) throws Exception;
}

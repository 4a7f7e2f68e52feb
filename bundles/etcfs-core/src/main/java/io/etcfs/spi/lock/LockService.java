package io.etcfs.spi.lock;

import io.etcfs.spi.meta.Compare;
import java.time.Duration;
import java.util.List;
import org.osgi.annotation.versioning.ProviderType;

/**
 * Cluster-wide shared/exclusive inode locks. Registered by lock plug-ins with the service
 * property {@value #BACKEND} naming the backend ({@code etcd}, {@code hazelcast}); the core binds
 * the one its configuration names and can rebind another in a running framework.
 *
 * <p>Contract (checked by the lock contract test suite every plug-in must pass):
 *
 * <ul>
 *   <li>Conflicting locks are never held at once by live sessions.
 *   <li>Waiters are served fairly: a stream of shared requests does not starve an exclusive one.
 *   <li>{@link #acquire} returns a fencing token that increases with every new holder.
 *   <li>A holder keeps a lock after use until another node asks for it (lock caching), and is
 *       told through the {@link RecallHandler}, no sooner than a minimum hold time after the
 *       grant (so two writers do not ping-pong the lock on every write).
 *   <li>Acquiring a lock this node already holds in the same or a stronger mode costs nothing.
 *   <li>A lock held by a dead node is free for others within one session TTL.
 * </ul>
 */
@ProviderType
public interface LockService {
  /** The service property naming a lock backend. */
  String BACKEND = "etcfs.backend";

  /** The backend's name, equal to its {@value #BACKEND} service property. */
  String backend();

  /** The session this node's locks are held under, opened on first use. */
  LockSession session();

  /**
   * Acquires a lock on {@code inode}, waiting at most {@code timeout}.
   *
   * @throws LockTimeoutException if the lock was not granted in time
   */
  HeldLock acquire(long inode, LockMode mode, Duration timeout) throws LockTimeoutException;

  /**
   * Gives a lock back at once (a recall handler calls this when it has flushed). Releasing a
   * lock no longer held (its session lapsed, it was released already) is not an error.
   */
  void release(HeldLock lock);

  /**
   * The compares that hold in the metadata store exactly while {@code lock} is held: every
   * metadata commit made under the lock carries them, so a holder whose session lapsed (paused,
   * cut off) cannot commit anything after another node took the lock.
   */
  List<Compare> guards(HeldLock lock);

  /**
   * Whether another session holds {@code inode}'s lock exclusively right now, as far as this
   * node's view of the lock table shows: a holder that may have written and not committed yet.
   * The core answers a {@code stat} from its cache unless this is true, and otherwise takes the
   * shared lock first (a recall), so the size and times a writer elsewhere has buffered show at
   * once (2.1). The view may trail the cluster by the backend's notification delay (for etcd,
   * the watch's), the same allowance the directory-entry caches have; it must never report an
   * exclusive holder late by more than that.
   */
  boolean exclusiveElsewhere(long inode);

  /** Where recalls for this node's locks are delivered. One handler; a new one replaces it. */
  void setRecallHandler(RecallHandler handler);
}

package io.etcfs.spi.lock;

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
 *   <li>A backend arbitrates only: what keeps data safe when a grant goes wrong (a holder whose
 *       session lapsed, two holders at once) is the core's inode fence ({@link
 *       io.etcfs.spi.fs.InodeFence}), which every data commit compares (3.0).
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

  /** What a backend's view shows of other sessions' exclusive interest in one inode (3.0). */
  enum Writer {
    /** No other session holds or asks for the lock exclusively. */
    NONE,
    /** Another session holds it exclusively, and no other exclusive request waits. */
    HOLDING,
    /**
     * Another session waits for it exclusively: it may be granted, and its {@code write()}
     * return, at any moment, before this node's view shows the grant.
     */
    WAITING,
    /** The backend keeps no view: the core reads the inode's fence instead. */
    UNKNOWN
  }

  /**
   * What this node's view of the lock table shows of other sessions' exclusive interest in
   * {@code inode} (3.0): a writer elsewhere may buffer changes of the file's size and times.
   * Asks nobody and never waits (it is called where a thread must not wait); the view may trail
   * the cluster by the backend's notification delay. The core combines it with the inode's fence
   * ({@link io.etcfs.spi.fs.InodeFence}), which says whether a holder declared everything
   * committed, to decide whether a {@code stat} may be answered from its cache or must take the
   * shared lock first (a recall: the writer commits).
   *
   * @return {@link Writer#UNKNOWN} by default (the core then reads the fence from the store for
   *     every such {@code stat} of a file it holds no lock on)
   */
  default Writer writerElsewhere(long inode) {
    return Writer.UNKNOWN;
  }

  /**
   * A hint from the core: whether anything is buffered under exclusive {@code lock} (3.0). A
   * clean lock may be given back sooner when idle, or made shared in place ({@link
   * RecallHandler#downgrading}). Policy only: safety never rests on it (the core's fence and its
   * answer to {@code downgrading} do).
   */
  default void clean(HeldLock lock, boolean clean) {}

  /**
   * Grants this node the exclusive lock on {@code inode} in the transaction that creates the
   * inode (2.2): the returned grant's guards and operations go into that transaction, so a new
   * file costs no lock round trip before its first write. Called once per attempt of the
   * transaction (a conflict rebuilds it); only the attempt that commits is adopted. Opens the
   * session if needed.
   *
   * @return null if the backend cannot grant a lock this way (the default): the caller acquires
   *     the lock at first use, as before
   */
  default CreateGrant createGrant(long inode) {
    return null;
  }

  /**
   * The lock a committed {@link #createGrant} gave this node, held from now on exactly as if
   * {@link #acquire} had granted it at {@code revision}: cached, recalled on demand, given back
   * when idle, gone with its session (2.2).
   *
   * @param revision the revision the creating transaction committed at
   * @return null if the lock cannot be held any more (its session ended meanwhile: then what
   *     the grant wrote goes with the session); the caller acquires the lock at first use
   */
  default HeldLock adoptCreated(CreateGrant grant, long revision) {
    return null;
  }

  /**
   * The transaction that carried {@code grant} may have committed or not (its outcome is
   * unknown): removes what it may have left, so that no lock is held that this node does not
   * know it holds (2.2). Best effort; what stays goes with the session at the latest.
   */
  default void abandonCreated(CreateGrant grant) {}

  /**
   * Shared locks on files nobody is writing, for all of them in one round trip (2.4): a reader
   * that opens one file of a directory asks for its siblings' too, on the guess that it reads
   * them next (a checksum sweep, {@code tar c}, a build). A hint, so it never waits and never
   * disturbs anyone: a lock is granted only where no exclusive lock is held or queued, and a
   * request that finds one is withdrawn rather than recalling it. Each lock returned is held
   * exactly as one {@link #acquire} granted in shared mode (cached, recalled on demand, given
   * back when idle, gone with its session, its {@link HeldLock#grantRevision} what a cache must
   * reach); inodes this node holds or is acquiring already are left out.
   *
   * @return the locks granted, possibly none (the default grants none: each file's lock is
   *     acquired at its first use, as before)
   */
  default List<HeldLock> prefetchShared(java.util.Collection<Long> inodes) {
    return List.of();
  }

  /**
   * Tells {@code listener} of each inode whose lock another session starts to hold or ask for
   * exclusively without a clean declaration — a writer elsewhere that may buffer changes of
   * its size and times (2.5). The core then lets the kernel keep attributes of files nobody
   * writes without taking their locks, and drops them when this says a writer comes. Called on
   * the backend's notification thread, before {@link #writerElsewhere} answers from a view that
   * shows the change; the listener must return promptly. One listener; a new one replaces it.
   *
   * @return whether this backend tells; the default does not, and the core lets the kernel keep
   *     a file's attributes only under that file's lock
   */
  default boolean watchExclusive(java.util.function.LongConsumer listener) {
    return false;
  }

  /** Where recalls for this node's locks are delivered. One handler; a new one replaces it. */
  void setRecallHandler(RecallHandler handler);
}

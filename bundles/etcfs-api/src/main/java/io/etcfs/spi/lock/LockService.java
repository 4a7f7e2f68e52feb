package io.etcfs.spi.lock;

import io.etcfs.spi.meta.Compare;
import io.etcfs.spi.meta.Op;
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

  /** {@link #attributesFrom}: another node may hold changes it has not committed. */
  long UNCOMMITTED_ELSEWHERE = -1;

  /**
   * Where this node may take {@code inode}'s attributes from, as far as its view of the lock
   * table shows (2.1). The core answers a {@code stat} from its cache unless another session
   * holds the lock exclusively and may have buffered changes — then it takes the shared lock
   * first (a recall: the writer commits), so a size a writer elsewhere has buffered shows at
   * once. The view may trail the cluster by the backend's notification delay (for etcd, the
   * watch's), the same allowance the directory-entry caches have.
   *
   * @return {@link #UNCOMMITTED_ELSEWHERE} if another session holds the lock exclusively and has
   *     not declared everything committed ({@link #cleanOps}); otherwise the revision a metadata
   *     cache must have reached to show what an exclusive holder elsewhere committed (a clean
   *     holder's declaration, or the last exclusive holder's release: a change under the
   *     filesystem's prefix, which a cache watching it is sure to reach; where the backend no
   *     longer knows that release, a revision it knows to be later, such as that of the read it
   *     rebuilt its view from), or 0
   */
  long attributesFrom(long inode);

  /**
   * Waits until {@link #attributesFrom} answers from a view that includes every lock change up
   * to metadata revision {@code revision} (2.3). The core passes the newest revision at which
   * its own metadata watch saw a key under {@code /etcfs/<fs>/locks/} change, so that its
   * cache never shows a file (a name, a size) whose lock the view does not show yet: the
   * create that grants a writer its lock is one transaction, and two watches on one store
   * deliver it at slightly different moments.
   *
   * @return whether the view is that new; a backend whose view is not ordered by the metadata
   *     store's revisions (it keeps no keys there) returns true at once
   */
  default boolean awaitView(long revision, long timeoutMs) {
    return true;
  }

  /**
   * Operations that declare an exclusive holder clean: the core adds them to a commit that
   * leaves nothing buffered under {@code lock} (the flush at a close), so other nodes state the
   * file from their caches instead of recalling the lock. The commit's {@link #guards} protect
   * them. Empty for a shared lock, or for a backend that cannot declare it (2.1).
   */
  List<Op> cleanOps(HeldLock lock);

  /**
   * Withdraws a clean declaration before this node buffers a change under {@code lock} again:
   * returns at once when none stands (the usual case), else after one round trip (2.1).
   *
   * @return false if {@code lock} is no longer held (the caller asks for the lock again)
   */
  boolean dirty(HeldLock lock);

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
   * As {@link #createGrant(long)}; with {@code clean}, the creating transaction also commits
   * everything the new file holds (its data, written before its create was committed), so the
   * grant may declare its holder clean at once, as {@link #cleanOps} does at a close (2.1, 2.2):
   * other nodes then state and read the file without a recall. The default ignores {@code
   * clean}; a grant that says dirty is always safe, it only costs others a recall.
   */
  default CreateGrant createGrant(long inode, boolean clean) {
    return createGrant(inode);
  }

  /**
   * The lock a committed {@link #createGrant} gave this node, held from now on exactly as if
   * {@link #acquire} had granted it at {@code revision}: cached, recalled on demand, given back
   * when idle, gone with its session, guarded by {@link #guards} (2.2).
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
   * the backend's notification thread, before {@link #attributesFrom} answers from a view that
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

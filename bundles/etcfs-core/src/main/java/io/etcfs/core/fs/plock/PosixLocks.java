package io.etcfs.core.fs.plock;

import io.etcfs.core.fs.meta.FsKeys;
import io.etcfs.spi.fencing.Membership;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.PosixLock;
import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * Cluster-wide POSIX (fcntl) and BSD (flock) locks of one node, in etcd: an owner is the front
 * end's lock owner on this node, so {@code <node>/<owner>} names it in the whole cluster. Every
 * lock key lives under one lease of this node (TTL 2 s), so a dead node's locks vanish within
 * about two seconds; a blocking request waits on a watch of the inode's lock keys until granted,
 * until its caller is interrupted (EINTR) or at most the configured bound (ENOLCK).
 */
public final class PosixLocks implements AutoCloseable {
  /** How long F_SETLKW and a blocking flock wait at most (then ENOLCK), unless configured. */
  public static final Duration DEFAULT_WAIT = Duration.ofSeconds(30);
  /** The lease of the lock keys: as short as etcd grants, as the inode lock session's. */
  public static final Duration LEASE_TTL = Duration.ofSeconds(2);

  private final Membership membership;
  private final NodeLease lease;
  private final RangeLocks ranges;
  private final FileLocks files;

  public PosixLocks(MetaStore store, FsKeys keys, Membership membership, Duration wait) {
    this(store, keys, membership, wait, LEASE_TTL);
  }

  PosixLocks(MetaStore store, FsKeys keys, Membership membership, Duration wait, Duration ttl) {
    if (wait.isNegative() || wait.isZero()) {
      throw new IllegalArgumentException("lock wait bound must be positive, not " + wait);
    }
    this.membership = membership;
    String node = membership.nodeName();
    this.lease = new NodeLease(store, ttl, "etcfs-plock-lease-" + node);
    FileLockTable table = new FileLockTable(store, membership, lease);
    Held held = new Held();
    Waits waits = new Waits(wait);
    this.ranges = new RangeLocks(keys, node, table, held, waits);
    this.files = new FileLocks(keys, node, table, held, waits);
  }

  /** The POSIX-lock lease, while this node holds fcntl or flock locks. */
  public java.util.List<io.etcfs.spi.lease.LeaseReport.Lease> leases() {
    return lease.report("file locks").stream().toList();
  }

  /** F_GETLK: a conflicting lock of another owner, or type UNLOCK if none. */
  public PosixLock getlk(long ino, long owner, PosixLock wanted) throws FsException {
    checkFenced();
    return ranges.getlk(ino, owner, wanted);
  }

  /**
   * F_SETLK ({@code wait} false: EAGAIN on conflict) and F_SETLKW: waits until granted, EINTR once
   * {@code interrupted} says the caller got a signal, ENOLCK at the bound.
   */
  public void setlk(long ino, long owner, PosixLock lock, boolean wait,
      BooleanSupplier interrupted) throws FsException {
    checkFenced();
    ranges.setlk(ino, owner, lock, wait, interrupted);
  }

  /** flock(2) with Linux's operation bits; waits as {@link #setlk} does. */
  public void flock(long ino, long owner, int op, BooleanSupplier interrupted)
      throws FsException {
    checkFenced();
    files.flock(ino, owner, op, interrupted);
  }

  private void checkFenced() throws FsException {
    if (membership.isFenced()) {
      throw new FsException(Errno.EIO, "node " + membership.nodeName() + " is fenced");
    }
  }

  /** Lets go of every lock of this node at once (its lease goes). */
  @Override
  public void close() {
    lease.close();
  }
}

package io.etcfs.spi.lock;

import io.etcfs.spi.meta.Compare;
import io.etcfs.spi.meta.Op;
import java.util.List;

/**
 * What a transaction that creates an inode carries so that it also grants its creator the
 * exclusive lock on that inode (2.2): the creator then writes the new file without asking for
 * the lock, one round trip fewer per new file. Built by {@link LockService#createGrant} for one
 * attempt of the creating transaction; once that transaction commits, {@link
 * LockService#adoptCreated} turns it into the {@link HeldLock} it granted.
 *
 * <p>Nobody else can have asked for the lock of an inode that did not exist, so a backend can
 * grant it unconditionally; what it adds must still make the lock exactly what {@link
 * LockService#acquire} would have granted — seen by every other node as held, recalled on
 * demand, gone with its session, and guarded by the same compares.
 *
 * @param inode the inode being created
 * @param sessionId the lock session the lock will be held under
 * @param guards compares the creating transaction must also carry
 * @param ops writes the creating transaction must also carry (for etcd: the lock key under the
 *     session's lease, so that its create revision, the creating transaction's, is the token)
 */
public record CreateGrant(long inode, long sessionId, List<Compare> guards, List<Op> ops) {
  public CreateGrant {
    guards = List.copyOf(guards);
    ops = List.copyOf(ops);
  }
}

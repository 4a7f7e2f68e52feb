package io.etcfs.spi.lock;

/**
 * An inode lock this node holds.
 *
 * <p>A holder can pause (a GC pause, SIGSTOP, a lost network) long enough for its session to lapse
 * and another node to take the lock; when it resumes it still believes it holds the lock. What
 * rejects its commits then is the core's inode fence ({@link io.etcfs.spi.fs.InodeFence}), raised
 * by every new exclusive holder, whatever the backend (3.0). The backend's fencing token names
 * the grant: the core keeps what the kernel cached under one grant apart from the next's.
 *
 * @param inode the inode locked
 * @param mode the mode held
 * @param fencingToken strictly increasing per inode across holders (the backend's own count)
 * @param sessionId the lock session the lock is held under
 * @param grantRevision a store revision everything the previous holders committed is at or
 *     before, so that a holder reading through a watch-fed cache waits for the cache to reach it
 *     before trusting what it reads; where it can, the service names the revision of a change
 *     under the filesystem's prefix (the previous holder's release), which such a watch delivers;
 *     0 if the backend knows no metadata revision (the core then reads the store's current one)
 */
public record HeldLock(
    long inode, LockMode mode, long fencingToken, long sessionId, long grantRevision) {}

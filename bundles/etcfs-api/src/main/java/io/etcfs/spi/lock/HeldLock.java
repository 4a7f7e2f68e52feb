package io.etcfs.spi.lock;

/**
 * An inode lock this node holds.
 *
 * <p>The fencing token is the point of the contract. A holder can pause (a GC pause, SIGSTOP, a
 * lost network) long enough for its session to lapse and another node to take the lock; when it
 * resumes it still believes it holds the lock. Every metadata commit made under the lock
 * therefore compares the token (in etcd: the create revision of the lock key), so the resumed
 * node's commits are rejected instead of overwriting the new holder's work.
 *
 * @param inode the inode locked
 * @param mode the mode held
 * @param fencingToken strictly increasing per inode across holders; compared by guarded commits
 * @param sessionId the lock session the lock is held under
 * @param grantRevision a store revision everything the previous holders committed is at or
 *     before, so that a holder reading through a watch-fed cache waits for the cache to reach it
 *     before trusting what it reads; where it can, the service names the revision of a change
 *     under the filesystem's prefix (the previous holder's release), which such a watch delivers
 */
public record HeldLock(
    long inode, LockMode mode, long fencingToken, long sessionId, long grantRevision) {}

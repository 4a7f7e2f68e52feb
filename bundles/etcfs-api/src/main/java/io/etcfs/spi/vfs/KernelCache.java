package io.etcfs.spi.vfs;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * What a front end's kernel may have cached, told by the core when it goes stale (1.3). A front
 * end that keeps names, attributes or file data in the kernel registers one with
 * {@link Vfs#setKernelCache}; the core calls it
 *
 * <ul>
 *   <li>for every change another node committed to a name or a directory, and for every change
 *       of an inode's record from any node, from a thread of its own, in commit order, soon after
 *       the metadata watch delivered it (the allowance names have always had); and
 *   <li>synchronously before this node stops holding an inode's lock (recall, publish, a lapsed
 *       lock session), so that nothing cached under the lock is used after it.
 * </ul>
 *
 * Implementations must return promptly and must not call back into the {@link Vfs} for the same
 * inode.
 */
@ConsumerType
public interface KernelCache {
  /** {@code name} in directory {@code dir} was created, removed or replaced by another node. */
  void entryChanged(long dir, String name);

  /** The inode's attributes (or, for a directory, its times or link count) changed. */
  void inodeChanged(long ino);

  /**
   * This node is about to stop holding {@code ino}'s lock, or (1.6) a writer elsewhere is about
   * to change a file whose attributes the kernel may keep without a lock ({@link
   * Vfs#attributesCacheable}): attributes cached under it must not be used any more. Called before the lock goes; file data cached under it is dropped later,
   * when {@link Vfs#cacheGrant} shows a different grant.
   *
   * @param writeBack the lock is exclusive and let go in order (recalled, published): data the
   *     kernel holds dirty (stored through a shared mapping) should be written back now, and
   *     may be — until this returns, reads and writes of the inode are served under the lock
   *     that is going, without waiting for a new one
   */
  void lockGoing(long ino, boolean writeBack);
}

package io.etcfs.spi.alloc;

import io.etcfs.spi.meta.Op;
import java.util.List;
import org.osgi.annotation.versioning.ProviderType;

/**
 * Hands out device blocks for file data. Registered with the service property {@value #BACKEND};
 * the core binds the one its configuration names.
 *
 * <p>Contract: no block is ever handed out while another inode references it, across crashes,
 * fencing and the reclaim of a dead node's space (invariant 1). A block's life:
 *
 * <ol>
 *   <li>{@link #allocate} reserves it for this node (in memory; a crash frees it again);
 *   <li>the core writes the data, makes it durable, and commits the metadata that references it
 *       in one transaction that also carries {@link #commitOps} — the allocator's own record that
 *       the block now belongs to that inode, so allocation state can be rebuilt from committed
 *       metadata alone;
 *   <li>after the commit, {@link #committed}; if the data is never committed, {@link #abandon}.
 * </ol>
 *
 * Blocks an inode stops referencing (overwrite, truncate, unlink) go through the same commit as
 * {@code released} and are free for reuse only after it succeeded — never before, or a failed
 * commit would leave committed metadata pointing at reused blocks.
 */
@ProviderType
public interface Allocator {
  /** The service property naming an allocator backend. */
  String BACKEND = "etcfs.backend";

  String backend();

  /**
   * Reserves {@code blocks} blocks, contiguously where possible, preferring to continue at
   * {@code goal} (the device block after a file's last extent, or -1 for no preference).
   *
   * @throws NoSpaceException when the device has no free block left for this node
   */
  List<Extent> allocate(long blocks, long goal) throws NoSpaceException;

  /**
   * The metadata operations that record, in the same transaction as the inode's extent map,
   * that {@code referenced} now belong to inode {@code ino} and {@code released} no longer do.
   */
  List<Op> commitOps(long ino, List<Extent> referenced, List<Extent> released);

  /** The transaction carrying {@link #commitOps} succeeded: released blocks are free again. */
  void committed(List<Extent> referenced, List<Extent> released);

  /**
   * Like {@link #committed(List, List)}, with the store revision of that transaction: an
   * allocator that follows the store through a watch can wait for the watch to reach it rather
   * than re-read what the transaction changed.
   */
  default void committed(List<Extent> referenced, List<Extent> released, long revision) {
    committed(referenced, released);
  }

  /** Reserved blocks that will never be committed (a failed write, a retried transaction). */
  void abandon(List<Extent> extents);

  /** Free blocks on the whole device, for {@code statfs}. */
  long freeBlocks();

  /** All data blocks on the device. */
  long totalBlocks();
}

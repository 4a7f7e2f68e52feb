package io.etcfs.spi.alloc;

import java.util.List;
import org.osgi.annotation.versioning.ProviderType;

/**
 * Hands out device blocks for file data. Registered with the service property {@value #BACKEND};
 * the core binds the one its configuration names.
 *
 * <p>Contract: no block is ever handed out while another inode references it, across crashes,
 * fencing and the reclaim of a dead node's space (invariant 1). Blocks are only referenced by
 * metadata after the data in them is durable, so a block handed out and never committed is free
 * again after its owner's crash.
 */
@ProviderType
public interface Allocator {
  /** The service property naming an allocator backend. */
  String BACKEND = "etcfs.backend";

  String backend();

  /**
   * Allocates {@code blocks} blocks, contiguously where possible, preferring to continue after
   * {@code goal} (the block following a file's last extent, or -1 for no preference).
   *
   * @throws NoSpaceException when the device has no free block left for this node
   */
  List<Extent> allocate(long blocks, long goal) throws NoSpaceException;

  /** Returns blocks that no committed metadata references any more. */
  void free(List<Extent> extents);

  /** Free blocks on the whole device, for {@code statfs}. */
  long freeBlocks();

  /** All data blocks on the device. */
  long totalBlocks();
}

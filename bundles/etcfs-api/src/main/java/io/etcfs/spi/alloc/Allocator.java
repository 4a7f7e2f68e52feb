package io.etcfs.spi.alloc;

import io.etcfs.spi.fs.Keyspace;
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
 *
 * <p>Reservations (since 1.2): a node accepts a write into its buffer only after {@link #reserve}
 * promised it the blocks the later flush will need, so the write itself answers ENOSPC and a
 * write that returned is never dropped for lack of space. A promise is a count, not blocks: it
 * is spent by {@link #allocate(long, long, long)}, given back by {@link #unreserve}, and dies
 * with the node (or with the allocator instance, if the backend is swapped: the new one treats
 * what it never promised as unreserved). {@link #freeBlocks} never counts promised blocks.
 */
@ProviderType
public interface Allocator {
  /** The service property naming an allocator backend. */
  String BACKEND = "etcfs.backend";

  /**
   * A service property (since 1.5): the areas of the filesystem's keyspace ({@code
   * /etcfs/<fs>/AREA}) this allocator keeps besides the block ownership records, each one path
   * element ending in {@code /}, {@code arenas/} say. Whatever is there must be derivable from
   * the ownership records, or be advice: a live switch to this allocator (issue #15) deletes
   * them in its cutover, so the allocator starts from the ownership records as after a crash of
   * every node, not from what it kept the last time it was in use. The core deletes only the
   * areas {@link #isStateArea} allows.
   */
  String STATE = "etcfs.allocator.state";

  /**
   * A configuration property (since 1.5): {@code true} activates the allocator only to show that
   * it can be — a live switch prepares its target so before anything stops. An allocator in
   * standby reads no allocation state, writes nothing, and refuses every allocation; the same
   * configuration without it makes the allocator that is used.
   */
  String STANDBY = "etcfs.standby";

  /**
   * Whether {@code area} may be an allocator's state ({@link #STATE}): {@code arenas/}, {@code
   * wants/} and {@code freemap/} of the allocators etcfs ships, or a new one's {@code
   * alloc-NAME/}. Nothing else of the keyspace — inodes, locks, members, the ownership records —
   * is ever deleted by a switch.
   */
  static boolean isStateArea(String area) {
    return area != null && (area.equals(Keyspace.ARENAS) || area.equals(Keyspace.WANTS)
        || area.equals(Keyspace.FREE_MAP) || area.matches("alloc-[a-z0-9-]+/"));
  }

  String backend();

  /**
   * Reserves {@code blocks} blocks, contiguously where possible, preferring to continue at
   * {@code goal} (the device block after a file's last extent, or -1 for no preference).
   *
   * @throws NoSpaceException when the device has no free block left for this node
   */
  default List<Extent> allocate(long blocks, long goal) throws NoSpaceException {
    return allocate(blocks, goal, 0);
  }

  /**
   * As {@link #allocate(long, long)}, spending up to {@code reserved} blocks of this node's
   * promise first: those never fail for lack of space. All or nothing: on failure nothing is
   * allocated and the promise is as it was.
   *
   * @throws NoSpaceException when the unpromised part cannot be had
   */
  List<Extent> allocate(long blocks, long goal, long reserved) throws NoSpaceException;

  /**
   * Promises {@code blocks} more blocks to later allocations of this node, taking them out of
   * the space every other allocation (on any node) can get, before the caller accepts data that
   * will need them.
   *
   * @throws NoSpaceException when the device cannot promise them (nothing is promised then)
   */
  void reserve(long blocks) throws NoSpaceException;

  /** Gives back {@code blocks} of the promise (buffered data dropped, or committed otherwise). */
  void unreserve(long blocks);

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
  default void abandon(List<Extent> extents) {
    abandon(extents, 0);
  }

  /**
   * As {@link #abandon(List)}, and {@code keepReserved} of those blocks (at most their number)
   * go back into this node's promise: a failed flush keeps its buffer, so it keeps its claim on
   * space too.
   */
  void abandon(List<Extent> extents, long keepReserved);

  /**
   * Overwriting committed blocks in place (since 1.3). Asked before this node writes new data of
   * inode {@code ino} over {@code blocks}, which its committed extent map references, under the
   * inode's exclusive lock. A permit says that every block of {@code blocks} lies in space only
   * this node allocates from and is referenced by {@code ino} as far as this allocator knows,
   * and keeps both true until it is closed: while any permit is open, no block freed by another
   * node's commit (nor any space this node lets go) is handed out again here. The caller checks
   * its lock after taking the permit and writes before closing it, so a write whose lock lapsed
   * meanwhile either sees the lapse or ends before the blocks can belong to another inode.
   *
   * @return a permit to close once the device write returned, or null: the caller writes the data
   *     to fresh blocks instead (the default: every overwrite allocates)
   */
  default InPlace overwrite(long ino, Extent blocks) {
    return null;
  }

  /** Held while committed blocks are written in place ({@link #overwrite}). */
  @FunctionalInterface
  interface InPlace extends AutoCloseable {
    /** The write returned (or failed): the blocks may change hands again. */
    @Override
    void close();
  }

  /**
   * Free blocks on the whole device, for {@code statfs}: neither referenced, nor allocated or
   * promised on this node (other nodes' promises may not be known here).
   */
  long freeBlocks();

  /** All data blocks on the device. */
  long totalBlocks();
}

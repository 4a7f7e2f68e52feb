package io.etcfs.spi.fs;

import java.nio.charset.StandardCharsets;

/**
 * An inode's fencing record (1.1): the core's, not a lock backend's, so that what keeps data safe
 * does not depend on which backend granted the lock. Key {@code f/<inode, 16 hex>}, value {@code
 * <node> <generation, 16 hex> <grant, 16 hex> clean|dirty}.
 *
 * <p>The protocol (docs/ARCHITECTURE.md, "Who owns what"): a node granted an inode's exclusive
 * lock <em>raises</em> the fence — puts its own holder, in a transaction that compares the
 * record's mod revision with the one it saw at the grant — before it buffers or commits anything
 * under the lock. Every commit under the lock reads the record in its transaction (so the commit
 * compares its mod revision), refuses to go on if the record names another holder, and puts it
 * again (so its mod revision moves with every commit). Hence a holder whose lock was lost in
 * whatever backend — its session lapsed, a wrong grant — commits nothing once another holder has
 * raised, and two holders' commits are ordered by their raises: a wrong grant costs a wait or an
 * EIO, never data. {@code clean} declares that the holder has nothing buffered (a close committed
 * everything): other nodes then answer a {@code stat} from their caches instead of recalling the
 * lock.
 *
 * @param node the holder's node name
 * @param generation the holder's membership generation (one incarnation of the node)
 * @param grant which of that incarnation's grants (unique within it)
 * @param clean whether the holder declared everything committed
 */
public record InodeFence(String node, long generation, long grant, boolean clean) {
  private static final String CLEAN = "clean";
  private static final String DIRTY = "dirty";

  public InodeFence {
    if (node == null || node.isEmpty() || node.indexOf(' ') >= 0) {
      throw new IllegalArgumentException("not a node name: '" + node + "'");
    }
  }

  /** The key of {@code inode}'s fence. */
  public static byte[] key(Keyspace space, long inode) {
    return space.bytes(Keyspace.INODE_FENCES + Keyspace.hex(inode));
  }

  /** Where every fence lies: a key prefix. */
  public static byte[] prefix(Keyspace space) {
    return space.bytes(Keyspace.INODE_FENCES);
  }

  /** Whether {@code other} names the same holder (one grant of one incarnation), clean or not. */
  public boolean sameHolder(InodeFence other) {
    return other != null && node.equals(other.node) && generation == other.generation
        && grant == other.grant;
  }

  /** Whether this fence was raised by incarnation {@code generation} of {@code node}. */
  public boolean raisedBy(String node, long generation) {
    return this.node.equals(node) && this.generation == generation;
  }

  public InodeFence withClean(boolean clean) {
    return clean == this.clean ? this : new InodeFence(node, generation, grant, clean);
  }

  public byte[] value() {
    return (node + " " + Keyspace.hex(generation) + " " + Keyspace.hex(grant) + " "
        + (clean ? CLEAN : DIRTY)).getBytes(StandardCharsets.UTF_8);
  }

  /** A stored value as a fence, or null if it is not one (never trusted to be well formed). */
  public static InodeFence decode(byte[] value) {
    String[] p = new String(value, StandardCharsets.UTF_8).split(" ");
    if (p.length != 4 || p[0].isEmpty() || !(p[3].equals(CLEAN) || p[3].equals(DIRTY))) {
      return null;
    }
    try {
      return new InodeFence(p[0], Long.parseUnsignedLong(p[1], 16),
          Long.parseUnsignedLong(p[2], 16), p[3].equals(CLEAN));
    } catch (NumberFormatException e) {
      return null;
    }
  }

  @Override
  public String toString() {
    return new String(value(), StandardCharsets.UTF_8);
  }
}

package io.etcfs.alloc.shared.internal;

import io.etcfs.spi.alloc.BlockOwner;
import io.etcfs.spi.alloc.Extent;
import io.etcfs.spi.fs.Keyspace;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.MetaStore;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The shared free-extent map's keys, under {@code freemap/} (the API's {@link
 * Keyspace#FREE_MAP}), and one consistent read of all of them:
 *
 * <ul>
 *   <li>{@code v}: the map's version; every change by an allocator rewrites it and compares it,
 *       so changes of the map apply one at a time, cluster-wide;
 *   <li>{@code f/<start>} = {@code <length>}: a free extent;
 *   <li>{@code r/<start>} = {@code <node> <generation> <length>}: an extent one incarnation
 *       allocated (its blocks are then free, committed — with a block ownership record — or
 *       still being written); what a crash leaves here goes back to the free map at recovery,
 *       minus what the ownership records say was committed;
 *   <li>{@code p/<node>} = {@code <generation> <blocks>}: a node's promise (reserve), which no
 *       other node's allocation may take.
 * </ul>
 *
 * A commit (the core's transaction) only adds free extents (what it releases) and ownership
 * records, so it never needs the version: it can only make more space free.
 */
final class FreeMap {
  final Keyspace space;

  FreeMap(Keyspace space) {
    this.space = space;
  }

  byte[] version() {
    return space.bytes(Keyspace.FREE_MAP + "v");
  }

  /**
   * Held while one node makes the map ({@code <node> <generation, 16 hex>}): the map's free
   * extents may need many transactions, and nobody may use the map before all are in.
   */
  byte[] making() {
    return space.bytes(Keyspace.FREE_MAP + "i");
  }

  /** Where the free extents lie: a key prefix. */
  byte[] freePrefix() {
    return space.bytes(Keyspace.FREE_MAP + "f/");
  }

  byte[] free(long start) {
    return space.bytes(Keyspace.FREE_MAP + "f/" + Keyspace.hex(start));
  }

  byte[] reserved(long start) {
    return space.bytes(Keyspace.FREE_MAP + "r/" + Keyspace.hex(start));
  }

  byte[] promised(String node) {
    return space.bytes(Keyspace.FREE_MAP + "p/" + node);
  }

  static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static byte[] reservation(String node, long generation, long length) {
    return bytes(node + " " + Keyspace.hex(generation) + " " + length);
  }

  static byte[] promise(long generation, long blocks) {
    return bytes(Keyspace.hex(generation) + " " + blocks);
  }

  /** A reservation record: an extent allocated by one incarnation. */
  record Reservation(Extent extent, String node, long generation) {}

  /** A promise record. */
  record Promise(long generation, long blocks) {}

  /** The whole map at one revision. */
  record Snapshot(long versionRevision, TreeMap<Long, Long> free,
      Map<Long, Reservation> reserved, Map<String, Promise> promised) {
    long freeBlocks() {
      return free.values().stream().mapToLong(Long::longValue).sum();
    }

    long promisedBlocks() {
      return promised.values().stream().mapToLong(Promise::blocks).sum();
    }

    boolean initialised() {
      return versionRevision > 0;
    }
  }

  Snapshot read(MetaStore store) {
    String root = space.key(Keyspace.FREE_MAP);
    long versionRevision = 0;
    TreeMap<Long, Long> free = new TreeMap<>();
    Map<Long, Reservation> reserved = new LinkedHashMap<>();
    Map<String, Promise> promised = new LinkedHashMap<>();
    for (KeyValue kv : store.prefix(bytes(root), 0).kvs()) {
      String rel = kv.keyString().substring(root.length());
      String v = kv.valueString();
      if (rel.equals("v")) {
        versionRevision = kv.modRevision();
      } else if (rel.startsWith("f/")) {
        free.put(Long.parseUnsignedLong(rel.substring(2), 16), Long.parseLong(v));
      } else if (rel.startsWith("r/")) {
        String[] f = v.split(" ");
        long start = Long.parseUnsignedLong(rel.substring(2), 16);
        reserved.put(start, new Reservation(new Extent(start, Long.parseLong(f[2])), f[0],
            Long.parseUnsignedLong(f[1], 16)));
      } else if (rel.startsWith("p/")) {
        String[] f = v.split(" ");
        promised.put(rel.substring(2), new Promise(Long.parseUnsignedLong(f[0], 16),
            Long.parseLong(f[1])));
      }
    }
    return new Snapshot(versionRevision, free, reserved, promised);
  }

  /**
   * The block ownership records that may overlap {@code e}: records are at most {@code
   * maxRecord} blocks long, so one that covers a block of {@code e} starts at most that far
   * before it.
   */
  List<BlockOwner> owners(MetaStore store, Extent e, long maxRecord) {
    long from = Math.max(0, e.start() - maxRecord + 1);
    List<BlockOwner> out = new ArrayList<>();
    for (KeyValue kv : store.range(BlockOwner.key(space, from),
        BlockOwner.key(space, e.start() + e.length()), 0).kvs()) {
      BlockOwner o = BlockOwner.decode(space, kv.key(), kv.value());
      if (o != null && o.end() > e.start()) {
        out.add(o);
      }
    }
    return out;
  }
}

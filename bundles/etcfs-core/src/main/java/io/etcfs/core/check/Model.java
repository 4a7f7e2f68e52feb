package io.etcfs.core.check;

import io.etcfs.core.fs.meta.Codec;
import io.etcfs.core.fs.meta.FileExtent;
import io.etcfs.core.fs.meta.Inode;
import io.etcfs.spi.alloc.BlockOwner;
import io.etcfs.spi.fs.FsRecord;
import io.etcfs.spi.fs.Keyspace;
import io.etcfs.spi.meta.KeyValue;
import java.io.IOException;
import java.io.StringReader;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * A snapshot decoded into what the checks compare. Keys that do not decode become findings
 * ({@code *-corrupt}) and are otherwise left out, so one bad value never stops the rest.
 */
final class Model {
  record Entry(KeyValue kv, long dir, String name, Codec.Dirent dirent) {}

  record Chunk(KeyValue kv, long ino, List<FileExtent> extents) {}

  record Owner(KeyValue kv, BlockOwner owner) {}

  /** A key held by one incarnation: {@code node} and its generation (0 if it names none). */
  record Held(KeyValue kv, String node, long generation) {}

  /** A lock key: lock-etcd's, or an fcntl/flock owner's. */
  record LockKey(KeyValue kv, String kind, String node) {}

  /** A free-map extent: free ({@code f/}) or reserved ({@code r/}). */
  record Run(KeyValue kv, long start, long length, String node, long generation) {}

  final Keyspace space;
  final long revision;
  final List<Finding> findings = new ArrayList<>();
  FsRecord record;
  KeyValue recordKv;
  KeyValue inoNext;
  final TreeMap<Long, Inode> inodes = new TreeMap<>();
  final Map<Long, KeyValue> inodeKvs = new HashMap<>();
  final List<Entry> entries = new ArrayList<>();
  final TreeMap<Long, List<Chunk>> chunks = new TreeMap<>();
  final Map<Long, List<KeyValue>> xattrs = new TreeMap<>();
  final Map<Long, KeyValue> fences = new TreeMap<>();
  final Map<Long, KeyValue> dirTimes = new TreeMap<>();
  final TreeMap<Long, Owner> owners = new TreeMap<>();
  final Map<String, KeyValue> members = new TreeMap<>();
  final Map<Integer, Held> slots = new TreeMap<>();
  final Map<Integer, KeyValue> recoveries = new TreeMap<>();
  final Map<Long, Held> orphans = new TreeMap<>();
  final Map<Long, Held> arenas = new TreeMap<>();
  final List<LockKey> locks = new ArrayList<>();
  final List<KeyValue> freeMapAll = new ArrayList<>();
  final List<Run> free = new ArrayList<>();
  final List<Run> reserved = new ArrayList<>();
  final Map<String, Held> promises = new TreeMap<>();
  KeyValue freeMapVersion;
  KeyValue freeMapClaim;

  Model(FsSnapshot s) {
    this.space = Keyspace.of(s.fsName());
    this.revision = s.revision();
    for (KeyValue kv : s.kvs()) {
      String rel = space.relative(kv.keyString());
      if (rel != null) {
        try {
          add(kv, rel);
        } catch (IllegalArgumentException e) {
          findings.add(Finding.of(kindOf(rel) + "-corrupt", rel, e.getMessage()));
        }
      }
    }
  }

  private static String kindOf(String rel) {
    return switch (rel.substring(0, Math.max(0, rel.indexOf('/')))) {
      case "i" -> "inode";
      case "d" -> "dirent";
      case "e" -> "extent";
      case "blocks" -> "owner";
      case "freemap" -> "freemap";
      case "" -> rel.equals("fs") ? "record" : "key";
      default -> rel.substring(0, rel.indexOf('/'));
    };
  }

  private void add(KeyValue kv, String rel) {
    String[] p = rel.split("/", 4);
    switch (p[0]) {
      case "fs" -> {
        recordKv = kv;
        record = FsRecord.decode(kv.value());
      }
      case "ino" -> inoNext = kv;
      case "i" -> addInode(kv, p);
      case "d" -> addEntry(kv, p);
      case "e" -> {
        need(p.length == 3, "not an extent key");
        long ino = hex(p[1]);
        chunks.computeIfAbsent(ino, k -> new ArrayList<>())
            .add(new Chunk(kv, ino, Codec.decodeExtents(kv.value())));
      }
      case "x" -> xattrs.computeIfAbsent(hex(p[1]), k -> new ArrayList<>()).add(kv);
      case "f" -> fences.put(hex(p[1]), kv);
      case "m" -> dirTimes.put(hex(p[1]), kv);
      case "blocks" -> {
        BlockOwner o = BlockOwner.decode(space, kv.key(), kv.value());
        need(o != null, "not a block ownership record: '" + kv.valueString() + "'");
        owners.put(o.start(), new Owner(kv, o));
      }
      case "members" -> members.put(rel.substring("members/".length()), kv);
      case "slots" -> slots.put(Integer.parseInt(p[1], 16), held(kv, "node", null));
      case "recovery" -> recoveries.put(Integer.parseInt(p[1], 16), kv);
      case "orphans" -> orphans.put(hex(p[1]), held(kv, "node", "generation"));
      case "arenas" -> arenas.put(Long.parseLong(p[1], 16), held(kv, "node", "generation"));
      case "locks" -> {
        String node = lockNode(kv.valueString());
        if (node != null) {
          locks.add(new LockKey(kv, "lock", node));
        }
      }
      case "plocks", "flocks" -> {
        if (p.length >= 3) {
          locks.add(new LockKey(kv, p[0].substring(0, 5), p[2]));
        }
      }
      case "freemap" -> addFreeMap(kv, rel);
      default -> { }
    }
  }

  private void addInode(KeyValue kv, String[] p) {
    long ino = hex(p[1]);
    Inode i = Codec.decodeInode(kv.value());
    need(i.ino() == ino, "the record names inode " + i.ino());
    inodes.put(ino, i);
    inodeKvs.put(ino, kv);
  }

  private void addEntry(KeyValue kv, String[] p) {
    need(p.length == 4 && !p[3].isEmpty(), "not a directory entry key");
    entries.add(new Entry(kv, hex(p[1]), p[3], Codec.decodeDirent(kv.value())));
  }

  private void addFreeMap(KeyValue kv, String rel) {
    freeMapAll.add(kv);
    String[] p = rel.split("/", 3);
    String[] v = kv.valueString().trim().split(" ");
    switch (p[1]) {
      case "v" -> freeMapVersion = kv;
      case "i" -> freeMapClaim = kv;
      case "f" -> free.add(new Run(kv, hex(p[2]), Long.parseLong(v[0]), null, 0));
      case "r" -> {
        need(v.length == 3, "not a reservation: '" + kv.valueString() + "'");
        reserved.add(new Run(kv, hex(p[2]), Long.parseLong(v[2]), v[0], hex(v[1])));
      }
      case "p" -> {
        need(v.length == 2, "not a promise: '" + kv.valueString() + "'");
        promises.put(p[2], new Held(kv, p[2], hex(v[0])));
      }
      default -> { }
    }
  }

  /**
   * lock-etcd's {@code S <node>} or {@code X <node>}; null for a value of another shape: the
   * area is the lock backend's, and only lock-etcd's keys are checked.
   */
  private static String lockNode(String v) {
    String[] p = v.trim().split(" ", 2);
    return p.length == 2 && (p[0].equals("S") || p[0].equals("X")) ? p[1] : null;
  }

  private static Held held(KeyValue kv, String nodeProp, String genProp) {
    Properties p = new Properties();
    try {
      p.load(new StringReader(kv.valueString()));
    } catch (IOException e) {
      throw new IllegalArgumentException(e.getMessage());
    }
    String node = p.getProperty(nodeProp);
    need(node != null && !node.isBlank(), "names no " + nodeProp);
    // a slot's generation is its create revision: it is written in the join transaction
    long gen = genProp == null ? kv.createRevision() : Long.parseLong(
        p.getProperty(genProp, "x").trim());
    return new Held(kv, node.trim(), gen);
  }

  static long hex(String s) {
    if (s.length() != 16) {
      throw new IllegalArgumentException("'" + s + "' is not 16 hex digits");
    }
    return Long.parseUnsignedLong(s, 16);
  }

  static void need(boolean ok, String why) {
    if (!ok) {
      throw new IllegalArgumentException(why);
    }
  }

  /** Whether {@code node}'s incarnation {@code generation} is a live member. */
  boolean live(String node, long generation) {
    KeyValue m = members.get(node);
    return m != null && m.createRevision() == generation;
  }

  /** The slot of {@code node}'s incarnation {@code generation}, whose recovery is still to come. */
  Integer slotOf(String node, long generation) {
    for (Map.Entry<Integer, Held> e : slots.entrySet()) {
      if (e.getValue().node().equals(node) && e.getValue().generation() == generation) {
        return e.getKey();
      }
    }
    return null;
  }

  /** The data area's blocks: [first, end). */
  long firstBlock() {
    return record.firstBlock();
  }

  long endBlock() {
    return record.firstBlock() + record.arenas() * record.blocksPerArena();
  }
}

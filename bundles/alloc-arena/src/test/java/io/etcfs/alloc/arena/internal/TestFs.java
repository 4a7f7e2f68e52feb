package io.etcfs.alloc.arena.internal;

import io.etcfs.spi.alloc.Extent;
import io.etcfs.spi.alloc.NoSpaceException;
import io.etcfs.spi.fs.FsRecord;
import io.etcfs.spi.fs.Keyspace;
import io.etcfs.spi.meta.Compare;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.Txn;
import io.etcfs.testing.MemoryMetaStore;
import io.etcfs.testing.TestMembership;
import java.lang.annotation.Annotation;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;

/**
 * A formatted filesystem in a {@link MemoryMetaStore} and nodes allocating in it, each committing
 * the way the core does: the allocator's ops in one txn guarded by the node's generation.
 */
final class TestFs implements AutoCloseable {
  static final String FS = "fs1";
  static final long FIRST_BLOCK = 256; // dataStart 1 MiB / 4 KiB

  final MemoryMetaStore store = new MemoryMetaStore();
  final int arenas;
  final long blocksPerArena;
  /** How long a node out of space waits for the others (the config's askWaitMillis). */
  int askWaitMillis = 2000;
  /** The config's inPlace. */
  boolean inPlace = true;

  TestFs(int arenas, long blocksPerArena) {
    this.arenas = arenas;
    this.blocksPerArena = blocksPerArena;
    long arenaSize = blocksPerArena * 4096;
    FsRecord record = new FsRecord(new java.util.UUID(0, 0), FS, 4096, arenaSize,
        FIRST_BLOCK * 4096 + arenas * arenaSize + 4096, FIRST_BLOCK * 4096, arenas, "etcd", "arena",
        java.time.Instant.parse("2026-12-05T00:00:00Z"));
    store.commit(new Txn().then(Op.put(Keyspace.of(FS).record(), record.encode())));
  }

  long total() {
    return arenas * blocksPerArena;
  }

  Node node(String name) {
    return node(name, 60, 0);
  }

  Node node(String name, int idleReleaseSeconds, int idleCheckSeconds) {
    TestMembership m = new TestMembership(store, FS, name);
    return new Node(store, m, new ArenaAllocator(store, m, config(FS, name, idleReleaseSeconds,
        idleCheckSeconds, askWaitMillis, inPlace)));
  }

  /** A second allocator instance for the same incarnation: a restart after a crash. */
  Node restart(Node old) {
    return new Node(store, old.membership, new ArenaAllocator(store, old.membership,
        config(FS, old.membership.nodeName(), 60, 0, askWaitMillis, inPlace)));
  }

  /** The reverse map in the store: arena → start → ref. */
  Map<Integer, Map<Long, Ref>> reverseMap() {
    ArenaKeys keys = new ArenaKeys(FS);
    Map<Integer, Map<Long, Ref>> out = new TreeMap<>();
    for (KeyValue kv : store.prefix(keys.blocksPrefix(), 0).kvs()) {
      long start = keys.blockStart(kv.key());
      int arena = (int) ((start - FIRST_BLOCK) / blocksPerArena);
      out.computeIfAbsent(arena, a -> new TreeMap<>()).put(start, Ref.decode(kv.valueString()));
    }
    return out;
  }

  List<KeyValue> claims() {
    return store.prefix(Keys.of("/etcfs/" + FS + "/arenas/"), 0).kvs();
  }

  /** Waits for asynchronous work (watch delivery, the idle check), bounded for a loaded machine. */
  static void await(BooleanSupplier condition, String what) {
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting until " + what);
      }
      try {
        Thread.sleep(2);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
  }

  @Override
  public void close() {
    store.close();
  }

  /** One node: its membership and its allocator. */
  static final class Node {
    final MemoryMetaStore store;
    final TestMembership membership;
    final ArenaAllocator alloc;

    Node(MemoryMetaStore store, TestMembership membership, ArenaAllocator alloc) {
      this.store = store;
      this.membership = membership;
      this.alloc = alloc;
    }

    List<Extent> allocate(long blocks, long goal) throws NoSpaceException {
      return alloc.allocate(blocks, goal);
    }

    /** Commits like the core: the allocator's ops under the generation guard. */
    boolean commit(long ino, List<Extent> referenced, List<Extent> released) {
      return commit(ino, referenced, released, true);
    }

    /**
     * Commits, telling the allocator the commit's revision (as the core does) or not (as an
     * older core would: the allocator then re-reads the arenas it released blocks in).
     */
    boolean commit(long ino, List<Extent> referenced, List<Extent> released, boolean revision) {
      Txn txn = new Txn().when(Compare.createRevision(membership.memberKey(),
          membership.generation()));
      alloc.commitOps(ino, referenced, released).forEach(txn::then);
      var result = store.commit(txn);
      boolean ok = result.succeeded();
      if (ok && revision) {
        alloc.committed(referenced, released, result.revision());
      } else if (ok) {
        alloc.committed(referenced, released);
      } else {
        alloc.abandon(referenced);
      }
      return ok;
    }
  }

  static ArenaAllocator.Config config(String fs, String node, int idleRelease, int idleCheck) {
    return config(fs, node, idleRelease, idleCheck, 2000, true);
  }

  static ArenaAllocator.Config config(String fs, String node, int idleRelease, int idleCheck,
      int askWait, boolean inPlace) {
    return config(fs, node, idleRelease, idleCheck, askWait, inPlace, false);
  }

  static ArenaAllocator.Config config(String fs, String node, int idleRelease, int idleCheck,
      int askWait, boolean inPlace, boolean standby) {
    return new ArenaAllocator.Config() {
      @Override
      public Class<? extends Annotation> annotationType() {
        return ArenaAllocator.Config.class;
      }

      @Override
      public String fsName() {
        return fs;
      }

      @Override
      public String nodeName() {
        return node;
      }

      @Override
      public int idleReleaseSeconds() {
        return idleRelease;
      }

      @Override
      public int idleCheckSeconds() {
        return idleCheck;
      }

      @Override
      public int askWaitMillis() {
        return askWait;
      }

      @Override
      public boolean inPlace() {
        return inPlace;
      }

      @Override
      public boolean etcfs_standby() {
        return standby;
      }
    };
  }
}

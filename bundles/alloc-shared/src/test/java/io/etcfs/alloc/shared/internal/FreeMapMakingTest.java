package io.etcfs.alloc.shared.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.spi.alloc.BlockOwner;
import io.etcfs.spi.alloc.Extent;
import io.etcfs.spi.alloc.NoSpaceException;
import io.etcfs.spi.fs.FsRecord;
import io.etcfs.spi.fs.Keyspace;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.Txn;
import io.etcfs.testing.ComponentConfigs;
import io.etcfs.testing.MemoryMetaStore;
import io.etcfs.testing.TestMembership;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The free map made over many transactions: after another allocator (a live switch) the free
 * space lies in more pieces than one transaction takes. Nodes starting together make one map;
 * a maker that died half-way is taken over, its partial map replaced.
 */
@Timeout(60)
class FreeMapMakingTest {
  static final String FS = "making";
  static final int BLOCK = 4096;
  static final long FIRST = 16;
  static final long BLOCKS = 1024;

  final MemoryMetaStore store = new MemoryMetaStore();
  final Keyspace space = Keyspace.of(FS);
  final List<SharedAllocator> started = new ArrayList<>();
  final ExecutorService pool = Executors.newCachedThreadPool();
  /** Every other block owned: 400 records, 400 free pieces and more. */
  final TreeSet<Long> owned = new TreeSet<>();

  @BeforeEach
  void format() {
    FsRecord r = new FsRecord(UUID.randomUUID(), FS, BLOCK, 256L * BLOCK,
        (FIRST + BLOCKS) * BLOCK, FIRST * BLOCK, 4, "etcd", "shared", Instant.now());
    Txn txn = new Txn().then(Op.put(space.record(), r.encode()));
    store.commit(txn);
    Txn records = new Txn();
    for (long b = FIRST + 1; owned.size() < 400; b += 2) {
      owned.add(b);
      BlockOwner o = new BlockOwner(b, 1, 1000 + b);
      records.then(Op.put(o.key(space), o.value()));
      if (owned.size() % 100 == 0) { // etcd's limit of operations in one transaction
        store.commit(records);
        records = new Txn();
      }
    }
  }

  @AfterEach
  void stop() {
    started.forEach(SharedAllocator::deactivate);
    pool.shutdownNow();
    store.close();
  }

  SharedAllocator start(String node) {
    SharedAllocator a = new SharedAllocator(store, new TestMembership(store, FS, node),
        ComponentConfigs.of(SharedAllocator.Config.class, Map.of("fsName", FS, "nodeName",
            node)));
    synchronized (started) {
      started.add(a);
    }
    return a;
  }

  @Test
  void nodesStartingTogetherMakeOneMapOfEverythingTheRecordsLeaveFree() throws Exception {
    List<Future<SharedAllocator>> starting = new ArrayList<>();
    for (String n : List.of("a", "b", "c")) {
      starting.add(pool.submit(() -> start(n)));
    }
    List<Extent> got = new ArrayList<>();
    for (Future<SharedAllocator> f : starting) {
      got.addAll(allocateAll(f.get(30, TimeUnit.SECONDS)));
    }
    assertEverythingFreeHandedOutOnce(got);
    assertTrue(store.get(space.bytes(Keyspace.FREE_MAP + "i")).isEmpty(), "the claim is gone");
  }

  @Test
  void aMakerThatDiedHalfWayIsTakenOverAndItsPartialMapReplaced() throws Exception {
    // a claim of an incarnation that is no member, and a batch of it that is wrong
    store.commit(new Txn()
        .then(Op.put(space.bytes(Keyspace.FREE_MAP + "i"),
            FreeMap.bytes("ghost " + Keyspace.hex(1))))
        .then(Op.put(space.bytes(Keyspace.FREE_MAP + "f/" + Keyspace.hex(FIRST + 1)),
            FreeMap.bytes("64"))));
    SharedAllocator a = start("a");
    assertEverythingFreeHandedOutOnce(allocateAll(a));
  }

  private static List<Extent> allocateAll(SharedAllocator a) {
    List<Extent> out = new ArrayList<>();
    while (true) {
      try {
        out.addAll(a.allocate(1, -1));
      } catch (NoSpaceException e) {
        return out;
      }
    }
  }

  private void assertEverythingFreeHandedOutOnce(List<Extent> got) {
    TreeSet<Long> blocks = new TreeSet<>();
    for (Extent e : got) {
      for (long b = e.start(); b < e.start() + e.length(); b++) {
        assertTrue(blocks.add(b), "block " + b + " handed out twice");
        assertTrue(!owned.contains(b), "block " + b + " is owned");
        assertTrue(b >= FIRST && b < FIRST + BLOCKS, "block " + b + " outside the data area");
      }
    }
    assertEquals(BLOCKS - owned.size(), blocks.size(), "every free block, once");
  }
}

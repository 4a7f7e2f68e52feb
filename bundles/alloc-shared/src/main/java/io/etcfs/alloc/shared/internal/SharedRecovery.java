package io.etcfs.alloc.shared.internal;

import io.etcfs.spi.alloc.BlockOwner;
import io.etcfs.spi.alloc.Extent;
import io.etcfs.spi.fencing.DeadNode;
import io.etcfs.spi.fencing.Membership;
import io.etcfs.spi.fencing.RecoveryParticipant;
import io.etcfs.spi.fs.Keyspace;
import io.etcfs.spi.meta.Compare;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.Txn;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Reference;

/**
 * The allocator's share of recovering a dead node: what it allocated and did not commit goes
 * back to the free map, and its promise is dropped. A reservation record may cover blocks the
 * node did commit (their ownership records name them): only the rest is freed, so a block a
 * committed file references is never handed out again (invariant 1).
 */
@Component(
    service = RecoveryParticipant.class,
    configurationPid = SharedAllocator.PID,
    configurationPolicy = ConfigurationPolicy.REQUIRE)
public final class SharedRecovery implements RecoveryParticipant {
  private static final Logger LOG = System.getLogger(SharedRecovery.class.getName());
  /** Reservation records one recovery transaction frees at most (within etcd's 128 ops). */
  private static final int PER_TXN = 16;

  private final MetaStore store;
  private final Membership membership;
  private final FreeMap map;

  @Activate
  public SharedRecovery(@Reference(name = "metaStore") MetaStore store,
      @Reference(name = "membership") Membership membership, SharedAllocator.Config config) {
    this.store = store;
    this.membership = membership;
    this.map = new FreeMap(Keyspace.of(config.fsName()));
  }

  @Override
  public String name() {
    return RecoveryParticipant.ALLOCATOR;
  }

  @Override
  public String recover(DeadNode dead) {
    long freed = release(store, map, membership, dead.node(), dead.generation());
    LOG.log(Level.INFO, "recovery of {0} generation {1}: {2} uncommitted block(s) freed",
        dead.node(), dead.generation(), freed);
    return "blocks freed " + freed;
  }

  /**
   * Frees what incarnation {@code (node, generation)} reserved and did not commit, and drops its
   * promise, in transactions on the map guarded by {@code live}'s generation.
   *
   * @return the blocks freed
   */
  static long release(MetaStore store, FreeMap map, Membership live, String node,
      long generation) {
    long freed = 0;
    for (int attempt = 0; attempt < 10_000; attempt++) {
      FreeMap.Snapshot s = map.read(store);
      List<FreeMap.Reservation> theirs = new ArrayList<>();
      for (FreeMap.Reservation r : s.reserved().values()) {
        if (r.node().equals(node) && r.generation() == generation && theirs.size() < PER_TXN) {
          theirs.add(r);
        }
      }
      FreeMap.Promise p = s.promised().get(node);
      boolean promise = p != null && p.generation() == generation;
      if (theirs.isEmpty() && !promise) {
        return freed;
      }
      Txn txn = new Txn()
          .when(Compare.modRevision(map.version(), s.versionRevision()))
          .when(Compare.createRevision(live.memberKey(), live.generation()))
          .then(Op.put(map.version(), FreeMap.bytes(Long.toString(s.versionRevision()))));
      long blocks = 0;
      for (FreeMap.Reservation r : theirs) {
        txn.then(Op.delete(map.reserved(r.extent().start())));
        Runs free = Runs.of(List.of(r.extent()));
        for (BlockOwner o : map.owners(store, r.extent(), SharedAllocator.MAX_RECORD)) {
          free.remove(new Extent(o.start(), o.length()));
        }
        // never free a block twice: what is free already stays as it is
        s.free().forEach((start, len) -> free.remove(new Extent(start, len)));
        for (Extent e : free.extents()) {
          txn.then(Op.put(map.free(e.start()), FreeMap.bytes(Long.toString(e.length()))));
          blocks += e.length();
        }
      }
      if (promise) {
        txn.then(Op.delete(map.promised(node)));
      }
      if (store.commit(txn).succeeded()) {
        freed += blocks;
      } else if (live.isFenced()) {
        throw new IllegalStateException("node " + live.nodeName() + " is fenced");
      }
    }
    throw new IllegalStateException("the shared free map changed under 10000 recoveries");
  }
}

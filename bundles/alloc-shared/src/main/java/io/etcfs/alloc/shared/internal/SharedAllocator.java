package io.etcfs.alloc.shared.internal;

import io.etcfs.spi.alloc.Allocator;
import io.etcfs.spi.alloc.BlockOwner;
import io.etcfs.spi.alloc.Extent;
import io.etcfs.spi.alloc.NoSpaceException;
import io.etcfs.spi.fencing.Membership;
import io.etcfs.spi.fs.FsRecord;
import io.etcfs.spi.fs.Keyspace;
import io.etcfs.spi.meta.Compare;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.Txn;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * Allocation from one free-extent map in etcd that every node shares ({@link FreeMap}): the
 * opposite trade-off to per-node arenas, kept as the baseline that shows what arenas buy. Every
 * allocation, promise and give-back is a transaction on shared keys, read whole and compared by
 * one version key, so they apply one at a time across the cluster and a node never allocates
 * from memory alone. What it buys: no space is stranded in another node's arena, and a node
 * owns nothing it must hand back when it leaves but what it allocated and has not committed.
 *
 * <p>The core's commit carries only additions to the map (what it releases becomes free
 * extents) and the block ownership records ({@link BlockOwner}), so commits never conflict with
 * allocations. Failures: running out of space is a {@link NoSpaceException}; a fenced node
 * ({@code IllegalStateException}) or a store failure propagates for the core to answer EIO.
 */
@Component(
    service = Allocator.class,
    configurationPid = SharedAllocator.PID,
    configurationPolicy = ConfigurationPolicy.REQUIRE,
    property = {
        Allocator.BACKEND + "=" + SharedAllocator.BACKEND_NAME,
        Allocator.STATE + "=" + Keyspace.FREE_MAP})
@Designate(ocd = SharedAllocator.Config.class)
public final class SharedAllocator implements Allocator {
  static final String PID = "io.etcfs.alloc.shared";
  static final String BACKEND_NAME = "shared";
  private static final Logger LOG = System.getLogger(SharedAllocator.class.getName());
  /** The longest block ownership record written; a longer extent gets several. */
  static final long MAX_RECORD = 1 << 16;
  /** Free extents one allocation transaction takes at most (two operations each). */
  private static final int MAX_PICK = 32;
  /** etcd's default limit of operations in one transaction (--max-txn-ops). */
  private static final int MAX_INIT_OPS = 128;
  /** How long a node waits for another to make the free map. */
  private static final java.time.Duration INIT_WAIT = java.time.Duration.ofSeconds(60);
  /** Tries of a transaction that lost to another node's before it gives up. */
  private static final int MAX_TRIES = 10_000;

  @ObjectClassDefinition(
      name = "etcfs allocator: shared free map",
      description = "Allocates device blocks from one free-extent map in etcd shared by all"
          + " nodes: every allocation is a transaction on shared keys.")
  public @interface Config {
    @AttributeDefinition(description = "The filesystem's name: the first element of its keys.")
    String fsName();

    @AttributeDefinition(description = "This node's name, recorded on what it allocates.")
    String nodeName();

    @AttributeDefinition(description = "Activated only to show it can be (a live switch"
        + " prepares its target so): reads and creates no free map, allocates nothing.")
    boolean etcfs_standby() default false;
  }

  private final MetaStore store;
  private final Membership membership;
  private final FreeMap map;
  private final long firstBlock;
  private final long total;
  /** Blocks allocated here and neither committed nor abandoned yet (guarded by this). */
  private final Runs outstanding = new Runs();
  /** This incarnation's reservation records in the store: start → length (guarded by this). */
  private final TreeMap<Long, Long> records = new TreeMap<>();
  /** This node's promise (guarded by this). */
  private long promise;
  private final ExecutorService background =
      Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "etcfs-alloc-shared");
        t.setDaemon(true);
        return t;
      });
  private final boolean standby;
  private volatile boolean stopped;

  @Activate
  public SharedAllocator(@Reference(name = "metaStore") MetaStore store,
      @Reference(name = "membership") Membership membership, Config config) {
    this.store = Objects.requireNonNull(store, "store");
    this.membership = Objects.requireNonNull(membership, "membership");
    String fsName = required("fsName", config.fsName());
    String nodeName = required("nodeName", config.nodeName());
    if (!nodeName.equals(membership.nodeName())) {
      throw new IllegalArgumentException(PID + ": nodeName " + nodeName
          + " is not this node's membership (" + membership.nodeName() + ")");
    }
    Keyspace space = Keyspace.of(fsName);
    this.map = new FreeMap(space);
    FsRecord record = FsRecord.decode(store.get(space.record()).orElseThrow(
        () -> new IllegalStateException("filesystem '" + fsName + "' is not formatted"))
        .value());
    this.firstBlock = record.firstBlock();
    this.total = record.arenas() * record.blocksPerArena();
    this.standby = config.etcfs_standby();
    if (standby) {
      // A switch's target before its cutover: another allocator still commits, so a map made
      // now would be stale; the cutover deletes any map left from before (Allocator#STATE).
      return;
    }
    initialise(space);
    // What an earlier instance of this incarnation allocated and never committed is free again:
    // nothing here knows of it (a crash, or the bundle restarted).
    SharedRecovery.release(store, map, membership, membership.nodeName(),
        membership.generation());
  }

  /**
   * The first node to use the map creates it: the data area minus what the block ownership
   * records say is in use — all of it on a new filesystem, less on one used with another
   * allocator (a switch, issue #15). The records cannot change under the read: they are written
   * only by commits of extents an allocator handed out, and none is handing any out — this one
   * has no map yet, and another allocator is never in use beside it (the record names one, and
   * every commit compares the record). After a live switch to this allocator the cutover has
   * deleted any map an earlier period left (it is stale: the other allocator freed and handed
   * out blocks since), so the map is made here again; the target waited in standby until then.
   *
   * <p>Space another allocator used is free in many pieces, more than one transaction takes, so
   * the map is made in steps under a claim ({@link FreeMap#making}): the claim, then the free
   * extents a batch at a time, each batch comparing the claim, then the version key (which is
   * what makes the map usable) with the claim deleted. Other nodes wait for the version; the
   * claim of a node that died meanwhile is taken over, and its partial extents deleted in the
   * same transaction, so none of its batches can land after.
   */
  private void initialise(Keyspace space) {
    long deadline = System.nanoTime() + INIT_WAIT.toNanos();
    byte[] me = FreeMap.bytes(membership.nodeName() + " "
        + Keyspace.hex(membership.generation()));
    while (store.get(map.version()).isEmpty()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("the shared free map was not made within "
            + INIT_WAIT.toSeconds() + " s (another node is making it: "
            + store.get(map.making()).map(KeyValue::valueString).orElse("nobody") + ")");
      }
      Optional<KeyValue> making = store.get(map.making());
      Txn claim = new Txn().when(Compare.absent(map.version()))
          .when(Compare.createRevision(membership.memberKey(), membership.generation()));
      if (making.isEmpty()) {
        claim.when(Compare.absent(map.making()));
      } else if (makerAlive(space, making.get().valueString())) {
        sleep(50); // another node is making it
        continue;
      } else {
        claim.when(Compare.modRevision(map.making(), making.get().modRevision()));
      }
      claim.then(Op.put(map.making(), me)).then(Op.deletePrefix(map.freePrefix()));
      if (store.commit(claim).succeeded()) {
        make(space, me);
        return;
      }
    }
  }

  /** Makes the map under this node's claim; the claim lost means another node took over. */
  private void make(Keyspace space, byte[] me) {
    Runs free = Runs.of(List.of(new Extent(firstBlock, total)));
    for (KeyValue kv : store.prefix(BlockOwner.prefix(space), 0).kvs()) {
      BlockOwner o = BlockOwner.decode(space, kv.key(), kv.value());
      if (o != null) {
        free.remove(new Extent(o.start(), o.length()));
      }
    }
    List<Extent> extents = free.extents();
    for (int from = 0; from < extents.size(); from += MAX_INIT_OPS - 1) {
      Txn batch = new Txn().when(Compare.value(map.making(), me));
      for (Extent e : extents.subList(from, Math.min(extents.size(), from + MAX_INIT_OPS - 1))) {
        batch.then(Op.put(map.free(e.start()), FreeMap.bytes(Long.toString(e.length()))));
      }
      if (!store.commit(batch).succeeded()) {
        throw new IllegalStateException("lost the making of the shared free map to another"
            + " node");
      }
    }
    if (!store.commit(new Txn().when(Compare.value(map.making(), me))
        .when(Compare.absent(map.version()))
        .then(Op.put(map.version(), FreeMap.bytes("0")))
        .then(Op.delete(map.making()))).succeeded()) {
      throw new IllegalStateException("lost the making of the shared free map to another node");
    }
    LOG.log(Level.INFO, "made the shared free map: {0} free extents, {1} blocks",
        extents.size(), free.blocks());
  }

  /** Whether the node that claimed the making ({@code <node> <generation>}) is still alive. */
  private boolean makerAlive(Keyspace space, String claim) {
    String[] f = claim.split(" ");
    if (f.length != 2) {
      return false;
    }
    Optional<KeyValue> member = store.get(space.bytes(Keyspace.MEMBERS + f[0]));
    try {
      return member.isPresent()
          && member.get().createRevision() == Long.parseUnsignedLong(f[1], 16);
    } catch (NumberFormatException e) {
      return false;
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while the shared free map is made");
    }
  }

  @Deactivate
  void deactivate() {
    stopped = true;
    background.shutdown();
    try {
      background.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Stops as a crash would: nothing more is written. */
  void halt() {
    stopped = true;
    background.shutdownNow();
  }

  @Override
  public String backend() {
    return BACKEND_NAME;
  }

  @Override
  public List<Extent> allocate(long blocks, long goal, long reserved) throws NoSpaceException {
    if (blocks <= 0) {
      return List.of();
    }
    List<Extent> got = new ArrayList<>();
    long spent = 0;
    try {
      while (blocks(got) < blocks) {
        long want = blocks - blocks(got);
        long spend;
        synchronized (this) {
          spend = Math.min(Math.min(reserved - spent, promise), want);
        }
        Round round = allocateRound(want, goal, spend);
        got.addAll(round.extents);
        spent += round.spent;
        goal = -1;
      }
      return got;
    } catch (NoSpaceException | RuntimeException e) {
      if (!got.isEmpty()) {
        abandon(got, spent); // all or nothing: the promise spent is kept again
      }
      throw e;
    }
  }

  private record Round(List<Extent> extents, long spent) {}

  /** One transaction: up to {@link #MAX_PICK} free extents taken, the promise spent on them. */
  private Round allocateRound(long want, long goal, long spend) throws NoSpaceException {
    String node = membership.nodeName();
    long gen = membership.generation();
    for (int attempt = 0; attempt < MAX_TRIES; attempt++) {
      checkLive();
      FreeMap.Snapshot s = map.read(store);
      long mine = promiseIn(s, node, gen);
      long unpromised = s.freeBlocks() - s.promisedBlocks();
      long spending = Math.min(Math.min(spend, mine), want);
      // what this takes beyond its own promise must leave every other promise whole
      if (want - spending > unpromised) {
        throw new NoSpaceException("no free block left on the device (" + s.freeBlocks()
            + " free, " + s.promisedBlocks() + " of them promised)");
      }
      List<Extent> picked = pick(s.free(), want, goal);
      long taking = blocks(picked);
      if (taking == 0) {
        throw new NoSpaceException("no free block left on the device");
      }
      spending = Math.min(spending, taking);
      Txn txn = guarded(s);
      Runs taken = Runs.of(picked);
      for (Map.Entry<Long, Long> f : s.free().entrySet()) {
        Extent free = new Extent(f.getKey(), f.getValue());
        if (!taken.overlaps(free)) {
          continue;
        }
        txn.then(Op.delete(map.free(free.start())));
        Runs rest = Runs.of(List.of(free));
        picked.forEach(rest::remove);
        for (Extent r : rest.extents()) {
          txn.then(Op.put(map.free(r.start()), FreeMap.bytes(Long.toString(r.length()))));
        }
      }
      for (Extent e : picked) {
        txn.then(Op.put(map.reserved(e.start()), FreeMap.reservation(node, gen, e.length())));
      }
      if (spending > 0) {
        txn.then(mine - spending == 0 ? Op.delete(map.promised(node))
            : Op.put(map.promised(node), FreeMap.promise(gen, mine - spending)));
      }
      if (store.commit(txn).succeeded()) {
        synchronized (this) {
          picked.forEach(e -> {
            outstanding.add(e);
            records.put(e.start(), e.length());
          });
          promise = Math.max(0, promise - spending);
        }
        return new Round(picked, spending);
      }
      backoff(attempt);
    }
    throw new IllegalStateException("the shared free map changed under " + MAX_TRIES
        + " allocations in a row");
  }

  /**
   * Free extents for {@code want} blocks, first fit from {@code goal} (the block after a
   * file's last extent: from inside the free extent that holds it, or the next one), wrapping
   * to the start of the device; at most {@link #MAX_PICK} of them.
   */
  static List<Extent> pick(TreeMap<Long, Long> free, long want, long goal) {
    List<Extent> out = new ArrayList<>();
    long left = want;
    Long used = null;
    Map.Entry<Long, Long> holding = goal < 0 ? null : free.floorEntry(goal);
    if (holding != null && holding.getKey() + holding.getValue() > goal) {
      out.add(new Extent(goal, Math.min(left, holding.getKey() + holding.getValue() - goal)));
      left -= out.get(0).length();
      used = holding.getKey();
    }
    long pivot = Math.max(0, goal);
    List<Map.Entry<Long, Long>> order = new ArrayList<>(free.tailMap(pivot, true).entrySet());
    order.addAll(free.headMap(pivot, false).entrySet());
    for (Map.Entry<Long, Long> f : order) {
      if (left == 0 || out.size() == MAX_PICK) {
        break;
      }
      if (f.getKey().equals(used)) {
        continue;
      }
      long take = Math.min(left, f.getValue());
      out.add(new Extent(f.getKey(), take));
      left -= take;
    }
    return out;
  }

  @Override
  public void reserve(long blocks) throws NoSpaceException {
    if (blocks <= 0) {
      return;
    }
    String node = membership.nodeName();
    long gen = membership.generation();
    for (int attempt = 0; attempt < MAX_TRIES; attempt++) {
      checkLive();
      FreeMap.Snapshot s = map.read(store);
      long available = s.freeBlocks() - s.promisedBlocks();
      if (available < blocks) {
        throw new NoSpaceException("cannot promise " + blocks + " blocks: " + available
            + " free and not promised");
      }
      long mine = promiseIn(s, node, gen);
      if (store.commit(guarded(s).then(Op.put(map.promised(node),
          FreeMap.promise(gen, mine + blocks)))).succeeded()) {
        synchronized (this) {
          promise = mine + blocks;
        }
        return;
      }
      backoff(attempt);
    }
    throw new IllegalStateException("the shared free map changed under " + MAX_TRIES
        + " promises in a row");
  }

  @Override
  public void unreserve(long blocks) {
    if (blocks <= 0) {
      return;
    }
    String node = membership.nodeName();
    long gen = membership.generation();
    try {
      for (int attempt = 0; attempt < MAX_TRIES && !membership.isFenced(); attempt++) {
        FreeMap.Snapshot s = map.read(store);
        long left = Math.max(0, promiseIn(s, node, gen) - blocks);
        if (store.commit(guarded(s).then(left == 0 ? Op.delete(map.promised(node))
            : Op.put(map.promised(node), FreeMap.promise(gen, left)))).succeeded()) {
          synchronized (this) {
            promise = left;
          }
          return;
        }
        backoff(attempt);
      }
    } catch (RuntimeException e) {
      // the promise goes back with this incarnation's recovery at the latest
      LOG.log(Level.WARNING, "could not give back a promise of {0} blocks: {1}", blocks,
          e.toString());
    }
  }

  /**
   * Ownership records for {@code referenced} (several per extent past {@link #MAX_RECORD});
   * for {@code released}, the records that cover them cut down to what stays referenced, and
   * free extents: the blocks are free exactly when the commit applies. Reads the records the
   * released blocks are in (one range read per extent): this allocator keeps no mirror of them.
   */
  @Override
  public List<Op> commitOps(long ino, List<Extent> referenced, List<Extent> released) {
    List<Op> ops = new ArrayList<>();
    for (Extent e : referenced) {
      for (long at = e.start(); at < e.start() + e.length(); at += MAX_RECORD) {
        long len = Math.min(MAX_RECORD, e.start() + e.length() - at);
        BlockOwner o = new BlockOwner(at, len, ino);
        ops.add(Op.put(o.key(map.space), o.value()));
      }
    }
    if (released.isEmpty()) {
      return ops;
    }
    Runs gone = Runs.of(released);
    Map<Long, BlockOwner> touched = new TreeMap<>();
    for (Extent e : released) {
      for (BlockOwner o : map.owners(store, e, MAX_RECORD)) {
        touched.put(o.start(), o);
      }
    }
    for (BlockOwner o : touched.values()) {
      ops.add(Op.delete(o.key(map.space)));
      Runs keep = Runs.of(List.of(new Extent(o.start(), o.length())));
      released.forEach(keep::remove);
      for (Extent k : keep.extents()) {
        BlockOwner piece = new BlockOwner(k.start(), k.length(), o.inode());
        ops.add(Op.put(piece.key(map.space), piece.value()));
      }
    }
    for (Extent e : gone.extents()) {
      ops.add(Op.put(map.free(e.start()), FreeMap.bytes(Long.toString(e.length()))));
    }
    return ops;
  }

  /** Committed blocks are no longer outstanding; records with nothing outstanding go. */
  @Override
  public void committed(List<Extent> referenced, List<Extent> released) {
    List<Long> done = new ArrayList<>();
    synchronized (this) {
      referenced.forEach(outstanding::remove);
      for (Map.Entry<Long, Long> r : records.entrySet()) {
        if (!outstanding.overlaps(new Extent(r.getKey(), r.getValue()))) {
          done.add(r.getKey());
        }
      }
      done.forEach(records::remove);
    }
    if (!done.isEmpty() && !stopped) {
      background.execute(() -> deleteRecords(done));
    }
  }

  /**
   * Deletes reservation records whose blocks were all committed (their ownership records now
   * say so). Best effort: a record left behind is released at this incarnation's recovery, minus
   * what the ownership records name.
   */
  private void deleteRecords(List<Long> starts) {
    try {
      for (int i = 0; i < starts.size(); i += 100) {
        Txn txn = new Txn().when(Compare.createRevision(membership.memberKey(),
            membership.generation()));
        starts.subList(i, Math.min(starts.size(), i + 100))
            .forEach(s -> txn.then(Op.delete(map.reserved(s))));
        store.commit(txn);
      }
    } catch (RuntimeException e) {
      LOG.log(Level.DEBUG, "could not delete reservation records: {0}", e.toString());
    }
  }

  /**
   * Blocks that will never be committed go back to the free map, and out of this incarnation's
   * reservation records (else its recovery would free them a second time).
   */
  @Override
  public void abandon(List<Extent> extents, long keepReserved) {
    if (extents.isEmpty()) {
      return;
    }
    String node = membership.nodeName();
    long gen = membership.generation();
    Runs back = Runs.of(extents);
    try {
      for (int attempt = 0; attempt < MAX_TRIES && !membership.isFenced(); attempt++) {
        FreeMap.Snapshot s = map.read(store);
        Txn txn = guarded(s);
        TreeMap<Long, Long> newRecords = new TreeMap<>();
        synchronized (this) {
          for (Map.Entry<Long, Long> r : records.entrySet()) {
            Extent rec = new Extent(r.getKey(), r.getValue());
            if (!back.overlaps(rec)) {
              newRecords.put(rec.start(), rec.length());
              continue;
            }
            txn.then(Op.delete(map.reserved(rec.start())));
            Runs keep = Runs.of(List.of(rec));
            back.extents().forEach(keep::remove);
            for (Extent k : keep.extents()) {
              txn.then(Op.put(map.reserved(k.start()), FreeMap.reservation(node, gen,
                  k.length())));
              newRecords.put(k.start(), k.length());
            }
          }
        }
        for (Extent e : back.extents()) {
          txn.then(Op.put(map.free(e.start()), FreeMap.bytes(Long.toString(e.length()))));
        }
        long keep = Math.min(keepReserved, back.blocks());
        long mine = promiseIn(s, node, gen);
        if (keep > 0) {
          txn.then(Op.put(map.promised(node), FreeMap.promise(gen, mine + keep)));
        }
        if (store.commit(txn).succeeded()) {
          synchronized (this) {
            records.clear();
            records.putAll(newRecords);
            back.extents().forEach(outstanding::remove);
            promise = mine + keep;
          }
          return;
        }
        backoff(attempt);
      }
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "could not give back {0} abandoned blocks: {1}", back.blocks(),
          e.toString());
    }
  }

  @Override
  public long freeBlocks() {
    if (standby) {
      throw new IllegalStateException("the shared allocator is in standby");
    }
    FreeMap.Snapshot s = map.read(store);
    return Math.max(0, s.freeBlocks() - s.promisedBlocks());
  }

  @Override
  public long totalBlocks() {
    return total;
  }

  /** A transaction on the map: its version compared and rewritten, this node's generation. */
  private Txn guarded(FreeMap.Snapshot s) {
    return new Txn()
        .when(Compare.modRevision(map.version(), s.versionRevision()))
        .when(Compare.createRevision(membership.memberKey(), membership.generation()))
        .then(Op.put(map.version(), FreeMap.bytes(Long.toString(s.versionRevision()))));
  }

  private static long promiseIn(FreeMap.Snapshot s, String node, long gen) {
    FreeMap.Promise p = s.promised().get(node);
    return p != null && p.generation() == gen ? p.blocks() : 0;
  }

  private void checkLive() {
    if (stopped || standby) {
      throw new IllegalStateException("the shared allocator is "
          + (standby ? "in standby" : "stopped"));
    }
    if (membership.isFenced()) {
      throw new IllegalStateException("node " + membership.nodeName() + " is fenced");
    }
  }

  /** A lost race: another node changed the map. Retry at once, then with a short wait. */
  private static void backoff(int attempt) {
    if (attempt < 3) {
      return;
    }
    try {
      Thread.sleep(Math.min(20, 1 + attempt / 4));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted");
    }
  }

  private static long blocks(List<Extent> extents) {
    return extents.stream().mapToLong(Extent::length).sum();
  }

  private static String required(String name, String value) {
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException(PID + ": " + name + " is not set");
    }
    return value;
  }

  @Override
  public String toString() {
    return "shared free map of " + map.space.name();
  }
}

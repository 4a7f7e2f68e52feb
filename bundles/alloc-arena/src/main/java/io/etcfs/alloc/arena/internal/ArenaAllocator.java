package io.etcfs.alloc.arena.internal;

import io.etcfs.alloc.arena.internal.Geometry.Piece;
import io.etcfs.spi.alloc.Allocator;
import io.etcfs.spi.alloc.Extent;
import io.etcfs.spi.alloc.NoSpaceException;
import io.etcfs.spi.fencing.Membership;
import io.etcfs.spi.fs.Keyspace;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.Op;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * Allocation from per-node arenas claimed in etcd. A node claims a whole arena with one
 * transaction and then allocates inside it from memory, talking to nobody; the reverse map
 * {@code blocks/<arena>/<start>} written in the same transaction as each extent map change is
 * the only durable allocation state, so an arena is rebuilt by reading it.
 *
 * <p>Failures: running out of space is a {@link NoSpaceException}; a metadata store failure
 * while claiming ({@code MetaStoreException}) or a fenced node ({@code IllegalStateException})
 * propagates unchecked, for the core to answer EIO. Neither leaves a block reserved.
 */
@Component(
    service = Allocator.class,
    configurationPid = ArenaAllocator.PID,
    configurationPolicy = ConfigurationPolicy.REQUIRE,
    property = {
        Allocator.BACKEND + "=" + ArenaAllocator.BACKEND_NAME,
        Allocator.STATE + "=" + Keyspace.ARENAS,
        Allocator.STATE + "=" + Keyspace.WANTS})
@Designate(ocd = ArenaAllocator.Config.class)
public final class ArenaAllocator implements Allocator {
  /**
   * How long a commit waits for the reverse-map watch to show it. It normally trails the commit
   * by well under a millisecond; past this the released arenas are re-read instead.
   */
  private static final long WATCH_WAIT_MS = 500;

  static final String PID = "io.etcfs.alloc.arena";
  private static final System.Logger LOG = System.getLogger(ArenaAllocator.class.getName());
  static final String BACKEND_NAME = "arena";

  @ObjectClassDefinition(
      name = "etcfs allocator: arenas",
      description = "Allocates device blocks from per-node arenas claimed in etcd.")
  @interface Config {
    @AttributeDefinition(description = "The filesystem's name: the first element of its keys.")
    String fsName();

    @AttributeDefinition(description = "This node's name: the owner recorded on its arenas.")
    String nodeName();

    @AttributeDefinition(description = "Release an arena after it held nothing this long.")
    int idleReleaseSeconds() default 60;

    @AttributeDefinition(description = "How often to look for idle arenas (0: never).")
    int idleCheckSeconds() default 30;

    @AttributeDefinition(description = "How long a node out of space waits for other nodes to"
        + " release arenas they can spare before it answers ENOSPC.")
    int askWaitMillis() default 2000;

    @AttributeDefinition(description = "Let the core overwrite a file's committed blocks in"
        + " place (false: every overwrite goes to fresh blocks, copy-on-write).")
    boolean inPlace() default true;

    @AttributeDefinition(description = "Activated only to show it can be (a live switch"
        + " prepares its target so): reads no arena, claims nothing, allocates nothing.")
    boolean etcfs_standby() default false;
  }

  private final MetaStore store;
  private final String fsName;
  private final String nodeName;
  private final Membership membership;
  private final ArenaKeys keys;
  private final ArenaTable table;
  private final BlocksMirror mirror;
  private final ArenaClaimer claimer;
  private final SpaceRequests requests;
  private final CommitPlanner planner;
  private final ScheduledExecutorService background;
  private final boolean inPlace;
  private final boolean standby;
  private volatile boolean stopped;

  @Activate
  public ArenaAllocator(
      @Reference(name = "metaStore") MetaStore store,
      @Reference(name = "membership") Membership membership,
      Config config) {
    this(store, membership, config, System::nanoTime);
  }

  ArenaAllocator(MetaStore store, Membership membership, Config config, LongSupplier clock) {
    this.store = store;
    this.membership = membership;
    this.fsName = required("fsName", config.fsName());
    this.nodeName = required("nodeName", config.nodeName());
    if (!nodeName.equals(membership.nodeName())) {
      throw new IllegalArgumentException(PID + ": nodeName " + nodeName
          + " is not this node's membership (" + membership.nodeName() + ")");
    }
    this.inPlace = config.inPlace();
    this.standby = config.etcfs_standby();
    this.keys = new ArenaKeys(fsName);
    this.table = new ArenaTable(geometry(), clock);
    this.background = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "etcfs-alloc-arena-" + nodeName);
      t.setDaemon(true);
      return t;
    });
    this.mirror = new BlocksMirror(store, keys, table, background);
    this.planner = new CommitPlanner(table, mirror, keys);
    Claims claims = new Claims(store, keys, membership);
    this.claimer = new ArenaClaimer(table, claims, mirror, nodeName);
    this.requests = new SpaceRequests(store, keys, claims, table, claimer, background, nodeName,
        Math.max(0, config.askWaitMillis()));
    if (standby) {
      // A switch's target before its cutover: the claims and the ownership records may still
      // change under another allocator, and the cutover clears the claims (Allocator#STATE).
      return;
    }
    try {
      mirror.start();
      claimer.adopt();
      requests.start();
    } catch (RuntimeException e) {
      requests.close();
      mirror.close();
      background.shutdownNow();
      throw e;
    }
    scheduleIdleRelease(config);
  }

  private void scheduleIdleRelease(Config config) {
    long idleNanos = TimeUnit.SECONDS.toNanos(Math.max(0, config.idleReleaseSeconds()));
    int every = config.idleCheckSeconds();
    if (every > 0) {
      background.scheduleWithFixedDelay(() -> claimer.releaseIdle(idleNanos), every, every,
          TimeUnit.SECONDS);
    }
  }

  /**
   * The clean leave: stops the background work and releases every arena without reservations.
   * A fenced node releases nothing: its claims are guarded by a generation etcd no longer has,
   * recovery takes them back, and it may be cut off from etcd (each try would wait out the
   * request timeout).
   */
  @Deactivate
  void deactivate() {
    halt();
    if (standby) {
      return;
    }
    if (membership.isFenced()) {
      LOG.log(System.Logger.Level.INFO, "fenced: arenas left to recovery");
      return;
    }
    claimer.releaseAll();
  }

  /** Stops the background work and releases nothing, as a crash would (tests). */
  void halt() {
    stopped = true;
    background.shutdownNow();
    requests.close();
    mirror.close();
  }

  /** Every arena's use as this node's mirror shows it, for the shell's {@code arenas}. */
  List<ArenaTable.Usage> usage() {
    return table.usage();
  }

  int blockSize() {
    return table.geometry.blockSize();
  }

  @Override
  public String backend() {
    return BACKEND_NAME;
  }

  @Override
  public List<Extent> allocate(long blocks, long goal, long reserved) throws NoSpaceException {
    if (blocks < 1) {
      throw new IllegalArgumentException("cannot allocate " + blocks + " blocks");
    }
    checkRunning();
    return requests.withSpace(blocks, () -> table.allocate(blocks, goal, reserved, claimer));
  }

  @Override
  public void reserve(long blocks) throws NoSpaceException {
    if (blocks < 0) {
      throw new IllegalArgumentException("cannot reserve " + blocks + " blocks");
    }
    checkRunning();
    if (blocks > 0) {
      requests.withSpace(blocks, () -> {
        table.reserve(blocks, claimer);
        return null;
      });
    }
  }

  @Override
  public void unreserve(long blocks) {
    table.unreserve(blocks);
  }

  private void checkRunning() {
    if (stopped || standby || membership.isFenced()) {
      throw new IllegalStateException("the arena allocator of " + nodeName + " is "
          + (standby ? "in standby" : stopped ? "stopped" : "fenced") + ": no allocation");
    }
  }

  @Override
  public List<Op> commitOps(long ino, List<Extent> referenced, List<Extent> released) {
    return planner.commitOps(ino, referenced, released);
  }

  @Override
  public void committed(List<Extent> referenced, List<Extent> released) {
    planner.committed(planner.pieces(referenced), planner.runsByArena(released), mirror::read);
  }

  /**
   * Returns once the reverse-map watch has applied the commit: the released blocks of this node's
   * arenas are free already (the delete events freed them), so nothing is re-read, and the mirror
   * shows the recorded extents, so the next commit of the same file can grow their keys. Only if
   * the watch has not within {@link #WATCH_WAIT_MS} are the arenas re-read as without a revision.
   */
  @Override
  public void committed(List<Extent> referenced, List<Extent> released, long revision) {
    Map<Integer, RunSet> runs = planner.runsByArena(released);
    boolean applied = (runs.isEmpty() && referenced.isEmpty())
        || mirror.awaitRevision(revision, WATCH_WAIT_MS);
    planner.committed(planner.pieces(referenced), runs, applied ? null : mirror::read);
  }

  @Override
  public void abandon(List<Extent> extents, long keepReserved) {
    table.abandon(planner.pieces(extents), keepReserved);
  }

  /**
   * A permit while this node owns the blocks' arena and its reverse map gives them to {@code
   * ino}: a block freed elsewhere meanwhile (the inode's lock lapsed here and another node's
   * commit replaced or removed it) is not handed out here until the permit closes, and an owned
   * arena is let go only then. Blocks in an arena another node owns are never permitted: that
   * node could reuse them at once. Once this node is fenced the device refuses the write anyway.
   * None with {@code inPlace=false}.
   */
  @Override
  public InPlace overwrite(long ino, Extent blocks) {
    if (!inPlace || stopped || standby || membership.isFenced()) {
      return null;
    }
    return table.overwrite(ino, blocks.start(), blocks.end());
  }

  @Override
  public long freeBlocks() {
    if (standby) {
      throw new IllegalStateException("the arena allocator of " + nodeName + " is in standby");
    }
    return table.freeBlocks();
  }

  @Override
  public long totalBlocks() {
    return table.geometry.totalBlocks();
  }

  @Override
  public String toString() {
    return "arena allocator of " + fsName + " for " + nodeName + " on " + store.describe();
  }

  /** Releases the arenas idle for at least {@code idleNanos} now (the background check). */
  void releaseIdleArenas(long idleNanos) {
    claimer.releaseIdle(idleNanos);
  }

  /** The arenas this node owns, with their reverse maps as it knows them. */
  Map<Integer, Map<Long, Ref>> ownedView() {
    return table.locked(() -> {
      Map<Integer, Map<Long, Ref>> view = new TreeMap<>();
      table.owned().forEach(a -> view.put(a.index, new TreeMap<>(a.refs())));
      return view;
    });
  }

  private Geometry geometry() {
    byte[] record = store.get(keys.record()).orElseThrow(() -> new IllegalStateException(
        "filesystem " + fsName + " is not formatted (no record in " + store.describe() + ")"))
        .value();
    return Geometry.decode(record);
  }

  private static String required(String name, String value) {
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException(PID + ": " + name + " is not set");
    }
    return value;
  }
}

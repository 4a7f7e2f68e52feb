package io.etcfs.alloc.arena.internal;

import io.etcfs.alloc.arena.internal.Geometry.Piece;
import io.etcfs.spi.alloc.Allocator;
import io.etcfs.spi.alloc.Extent;
import io.etcfs.spi.alloc.NoSpaceException;
import io.etcfs.spi.fencing.Membership;
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
    property = Allocator.BACKEND + "=" + ArenaAllocator.BACKEND_NAME)
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
  }

  private final MetaStore store;
  private final String fsName;
  private final String nodeName;
  private final Membership membership;
  private final ArenaKeys keys;
  private final ArenaTable table;
  private final BlocksMirror mirror;
  private final ArenaClaimer claimer;
  private final ScheduledExecutorService background;
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
    this.keys = new ArenaKeys(fsName);
    this.table = new ArenaTable(geometry(), clock);
    this.background = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "etcfs-alloc-arena-" + nodeName);
      t.setDaemon(true);
      return t;
    });
    this.mirror = new BlocksMirror(store, keys, table, background);
    this.claimer = new ArenaClaimer(table, new Claims(store, keys, membership), mirror, nodeName);
    try {
      mirror.start();
      claimer.adopt();
    } catch (RuntimeException e) {
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
    stopped = true;
    background.shutdownNow();
    mirror.close();
    if (membership.isFenced()) {
      LOG.log(System.Logger.Level.INFO, "fenced: arenas left to recovery");
      return;
    }
    claimer.releaseAll();
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
  public List<Extent> allocate(long blocks, long goal) throws NoSpaceException {
    if (blocks < 1) {
      throw new IllegalArgumentException("cannot allocate " + blocks + " blocks");
    }
    if (stopped || membership.isFenced()) {
      throw new IllegalStateException("the arena allocator of " + nodeName + " is "
          + (stopped ? "stopped" : "fenced") + ": no allocation");
    }
    return table.allocate(blocks, goal, claimer);
  }

  /**
   * Referenced pieces must be this node's reservations. Released ranges are planned against a
   * read of the store, never against the watch-fed mirror, even in this node's own arenas: the
   * node that held the inode's lock before may have split the same extents a moment ago, and
   * the mirror may not have seen it yet. Keys of one inode change only under its lock, so the
   * read stays true until this commit.
   */
  @Override
  public List<Op> commitOps(long ino, List<Extent> referenced, List<Extent> released) {
    List<Op> ops = new ArrayList<>();
    Map<Integer, RunSet> byArena = runsByArena(released);
    List<Piece> pieces = pieces(referenced);
    table.locked(() -> {
      for (Piece p : pieces) {
        RunSet gone = byArena.get(p.arena());
        if (gone != null && !gone.intersect(p.start(), p.end()).isEmpty()) {
          throw new IllegalArgumentException("blocks " + p.start() + "+" + p.length()
              + " are both referenced and released in one commit");
        }
        table.checkReserved(p, ino);
      }
    });
    ops.addAll(referenceOps(ino, coalesce(pieces), byArena));
    byArena.forEach((index, runs) -> addOps(ops, index,
        ReleasePlan.plan(mirror.readCovering(index, runs.runs().get(0)[0], lastEnd(runs)), runs,
            ino)));
    return ops;
  }

  /**
   * The puts recording {@code merged}: where the inode's recorded extent ends exactly where a
   * piece starts, that key grows instead of a new one being added, so a file written sequentially
   * in many commits keeps one reverse-map key per contiguous run — and releasing it later costs a
   * few operations, not one per commit (etcd allows 128 per transaction). The candidates come
   * from the mirror but their values from the store, all of one arena in one read where they lie
   * close together: keys of one inode change only in commits that also rewrite (and compare) that
   * inode, so the values read stay true until this commit.
   */
  private List<Op> referenceOps(long ino, List<Piece> merged, Map<Integer, RunSet> released) {
    Map<Piece, Long> proposed = new HashMap<>();
    Map<Integer, SortedSet<Long>> byArena = new TreeMap<>();
    table.locked(() -> {
      for (Piece p : merged) {
        Map.Entry<Long, Ref> before = table.arena(p.arena()).refs().floorEntry(p.start() - 1);
        RunSet gone = released.get(p.arena());
        if (before != null && before.getValue().ino() == ino
            && before.getKey() + before.getValue().length() == p.start()
            && (gone == null || gone.intersect(before.getKey(), p.start()).isEmpty())) {
          proposed.put(p, before.getKey());
          byArena.computeIfAbsent(p.arena(), a -> new TreeSet<>()).add(before.getKey());
        }
      }
    });
    Map<Integer, Map<Long, Ref>> stored = new HashMap<>();
    byArena.forEach((arena, starts) -> stored.put(arena, mirror.readKeys(arena, starts)));
    List<Op> ops = new ArrayList<>();
    for (Piece p : merged) {
      Long k = proposed.get(p);
      Ref ref = k == null ? null : stored.get(p.arena()).get(k);
      if (ref != null && ref.ino() == ino && k + ref.length() == p.start()) {
        ops.add(put(p.arena(), k, new Ref(ino, ref.length() + p.length())));
      } else {
        ops.add(put(p.arena(), p.start(), new Ref(ino, p.length())));
      }
    }
    return ops;
  }

  /** Adjacent pieces of one arena become one. */
  private static List<Piece> coalesce(List<Piece> pieces) {
    List<Piece> sorted = new ArrayList<>(pieces);
    sorted.sort(java.util.Comparator.comparingLong(Piece::start));
    List<Piece> out = new ArrayList<>();
    for (Piece p : sorted) {
      Piece last = out.isEmpty() ? null : out.get(out.size() - 1);
      if (last != null && last.arena() == p.arena() && last.end() == p.start()) {
        out.set(out.size() - 1, new Piece(p.arena(), last.start(), p.end()));
      } else {
        out.add(p);
      }
    }
    return out;
  }

  @Override
  public void committed(List<Extent> referenced, List<Extent> released) {
    table.committed(pieces(referenced), runsByArena(released), mirror::read);
  }

  /**
   * Returns once the reverse-map watch has applied the commit: the released blocks of this node's
   * arenas are free already (the delete events freed them), so nothing is re-read, and the mirror
   * shows the recorded extents, so the next commit of the same file can grow their keys. Only if
   * the watch has not within {@link #WATCH_WAIT_MS} are the arenas re-read as without a revision.
   */
  @Override
  public void committed(List<Extent> referenced, List<Extent> released, long revision) {
    Map<Integer, RunSet> runs = runsByArena(released);
    boolean applied = (runs.isEmpty() && referenced.isEmpty())
        || mirror.awaitRevision(revision, WATCH_WAIT_MS);
    table.committed(pieces(referenced), runs, applied ? null : mirror::read);
  }

  @Override
  public void abandon(List<Extent> extents) {
    table.abandon(pieces(extents));
  }

  @Override
  public long freeBlocks() {
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

  private List<Piece> pieces(List<Extent> extents) {
    List<Piece> out = new ArrayList<>();
    extents.forEach(e -> out.addAll(table.geometry.split(e)));
    return out;
  }

  private Map<Integer, RunSet> runsByArena(List<Extent> extents) {
    Map<Integer, RunSet> out = new TreeMap<>();
    for (Piece p : pieces(extents)) {
      out.computeIfAbsent(p.arena(), a -> new RunSet()).add(p.start(), p.end());
    }
    return out;
  }

  private static long lastEnd(RunSet runs) {
    List<long[]> all = runs.runs();
    return all.get(all.size() - 1)[1];
  }

  private void addOps(List<Op> ops, int arena, List<RefChange> changes) {
    for (RefChange c : changes) {
      ops.add(c.ref() == null ? Op.delete(keys.block(arena, c.start()))
          : put(arena, c.start(), c.ref()));
    }
  }

  private Op put(int arena, long start, Ref ref) {
    return Op.put(keys.block(arena, start), ref.encode().getBytes(StandardCharsets.UTF_8));
  }

  private static String required(String name, String value) {
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException(PID + ": " + name + " is not set");
    }
    return value;
  }
}

package io.etcfs.lock.etcd.internal;

import io.etcfs.spi.lease.LeaseReport;
import io.etcfs.spi.lock.CreateGrant;
import io.etcfs.spi.lock.HeldLock;
import io.etcfs.spi.lock.LockMode;
import io.etcfs.spi.lock.LockReport;
import io.etcfs.spi.lock.LockService;
import io.etcfs.spi.lock.LockSession;
import io.etcfs.spi.lock.LockTimeoutException;
import io.etcfs.spi.lock.RecallHandler;
import io.etcfs.spi.meta.MetaStore;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
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
 * Inode locks held in etcd under a short lock-session lease.
 *
 * <p>A lock is a key {@code locks/<ino>/<lease>} put under this node's session lease, valued
 * {@code "S <node>"} or {@code "X <node>"}. Keys of one inode queue in create-revision order:
 * an exclusive request is granted when no key precedes it, a shared one when only shared keys
 * precede it — first come, first served, so a stream of readers cannot starve a writer. The key's
 * create revision is the fencing token. A commit made under a lock that has since gone (session
 * lapsed, lock released) is refused by the core's inode fence, whatever the backend (SPI lock
 * 3.0; docs/ARCHITECTURE.md, "Who owns what"), not by this backend.
 *
 * <p>One watch on {@code locks/} serves both sides: a waiter re-reads its inode's queue when it
 * changes, and a holder that sees a conflicting key queued behind its own is recalled — no
 * sooner than the minimum hold time after its grant — and releases once its recall handler has
 * flushed. Held locks stay cached after use until recalled, or until idle for a while.
 *
 * <p>This class is the component: it checks the configuration, makes the thread pools, wires
 * the parts and stops them. The parts, each owning one concern: {@link NodeLocks} (the session
 * and the per-inode state they all share), {@link LockQueue} (acquire), {@link Prefetch} and
 * {@link CreateGrants} (locks granted otherwise), {@link LockWatch} (the watch and the lock
 * table), {@link Recalls}, {@link IdleRelease} and {@link Downgrades} (letting locks go),
 * {@link Releases} (deleting keys), {@link ReportView} (the shell's view). All of them log
 * under this class's name.
 */
@Component(
    service = {LockService.class, LeaseReport.class, LockReport.class},
    configurationPid = EtcdLockService.PID,
    configurationPolicy = ConfigurationPolicy.REQUIRE,
    property = LockService.BACKEND + "=" + EtcdLockService.BACKEND_NAME)
@Designate(ocd = EtcdLockService.Config.class)
public final class EtcdLockService implements LockService, LeaseReport, LockReport {
  static final String PID = "io.etcfs.lock.etcd";
  static final String BACKEND_NAME = "etcd";
  /**
   * Idle locks are given back by this many threads at a time, whatever their number. A node
   * that had unpacked 12,000 files once gave them all back at once, a thread and a transaction
   * each: etcd answered "too many requests", and the node's own keep-alive timed out, which
   * ended its lock session. Housekeeping must never cost the node its locks.
   */
  static final int IDLE_RELEASERS = 2;

  @ObjectClassDefinition(
      name = "etcfs lock backend: etcd",
      description = "Inode locks held in etcd under a short lock-session lease.")
  public @interface Config {
    @AttributeDefinition(description = "The filesystem's name: the first element of its keys.")
    String fsName();

    @AttributeDefinition(description = "This node's name, unique in the cluster.")
    String nodeName();

    @AttributeDefinition(
        description = "TTL of the lock-session lease; bounds the takeover of a dead node's locks.")
    int sessionTtlSeconds() default 2;

    @AttributeDefinition(
        description = "A lock is recalled no sooner than this after it was granted.")
    int minHoldMillis() default 50;

    @AttributeDefinition(description = "A cached lock unused for this long is given back.")
    int idleReleaseSeconds() default 30;

    @AttributeDefinition(description = "An exclusive lock declared clean at a close (nothing of"
        + " the file buffered) and unused for this long is made shared in place (or given back,"
        + " if the core cannot keep it so), so that readers elsewhere are granted at once"
        + " instead of recalling it.")
    int cleanReleaseMillis() default 1000;
  }

  private final MetaStore store;
  /** {@link #store}, counting: the lock service's etcd round trips, for the shell. */
  private final StoreCounts counts;
  private final String fsName;
  private final String nodeName;
  private final Duration sessionTtl;
  private final LockKeys codec;
  private final NodeLocks locks;
  private final LockView table = new LockView();
  private final ScheduledExecutorService timer;
  private final ExecutorService recallPool;
  private final ExecutorService idleReleases;
  private final Releases releases;
  private final Recalls recalls;
  private final Downgrades downgrades;
  private final IdleRelease idleRelease;
  private final LockWatch watch;
  private final LockQueue queue;
  private final Prefetch prefetch;
  private final CreateGrants creates;
  private final ReportView report;

  @Activate
  public EtcdLockService(@Reference(name = "metaStore") MetaStore store, Config config) {
    this.counts = new StoreCounts(Objects.requireNonNull(store, "store"));
    this.store = counts;
    this.fsName = required("fsName", config.fsName());
    this.nodeName = required("nodeName", config.nodeName());
    this.sessionTtl = sessionTtl(config.sessionTtlSeconds());
    if (config.minHoldMillis() < 0 || config.idleReleaseSeconds() < 1
        || config.cleanReleaseMillis() < 1) {
      throw new IllegalArgumentException(PID + ": minHoldMillis must be at least 0,"
          + " idleReleaseSeconds and cleanReleaseMillis at least 1");
    }
    long minHoldNanos = TimeUnit.MILLISECONDS.toNanos(config.minHoldMillis());
    long idleNanos = TimeUnit.SECONDS.toNanos(config.idleReleaseSeconds());
    long cleanIdleNanos = Math.min(idleNanos,
        TimeUnit.MILLISECONDS.toNanos(config.cleanReleaseMillis()));
    this.codec = new LockKeys(fsName, nodeName);
    this.locks = new NodeLocks(this.store, sessionTtl, nodeName);
    this.timer = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "etcfs-locks-timer"));
    this.recallPool = Executors.newCachedThreadPool(r -> daemon(r, "etcfs-locks-recall"));
    this.idleReleases = Executors.newFixedThreadPool(IDLE_RELEASERS,
        r -> daemon(r, "etcfs-locks-idle"));
    this.releases = new Releases(this.store, codec, locks);
    this.recalls = new Recalls(locks, releases, timer, recallPool, minHoldNanos, idleNanos,
        cleanIdleNanos);
    this.downgrades = new Downgrades(this.store, codec, table, locks, recalls);
    this.idleRelease = new IdleRelease(locks, idleReleases, recalls, downgrades, releases);
    this.watch = new LockWatch(this.store, codec, table, locks, recalls, releases, timer,
        recallPool);
    this.queue = new LockQueue(this.store, codec, locks, watch, recalls, releases);
    this.prefetch = new Prefetch(this.store, codec, table, locks, recalls);
    this.creates = new CreateGrants(this.store, codec, table, locks, recalls);
    this.report = new ReportView(counts, codec, locks, recalls);
    watch.start();
    long check = Math.max(1, cleanIdleNanos / 4);
    timer.scheduleWithFixedDelay(idleRelease::releaseIdle, check, check, TimeUnit.NANOSECONDS);
  }

  @Override
  public String backend() {
    return BACKEND_NAME;
  }

  @Override
  public LockSession session() {
    return locks.session();
  }

  @Override
  public HeldLock acquire(long inode, LockMode mode, Duration timeout)
      throws LockTimeoutException {
    return queue.acquire(inode, mode, timeout);
  }

  @Override
  public List<HeldLock> prefetchShared(Collection<Long> candidates) {
    return prefetch.prefetchShared(candidates);
  }

  @Override
  public void release(HeldLock lock) {
    releases.release(lock);
  }

  @Override
  public CreateGrant createGrant(long inode) {
    return creates.createGrant(inode);
  }

  @Override
  public HeldLock adoptCreated(CreateGrant grant, long revision) {
    return creates.adoptCreated(grant, revision);
  }

  @Override
  public void abandonCreated(CreateGrant grant) {
    creates.abandonCreated(grant);
  }

  @Override
  public void setRecallHandler(RecallHandler handler) {
    recalls.setHandler(handler);
  }

  @Override
  public Writer writerElsewhere(long inode) {
    return watch.writerElsewhere(inode);
  }

  @Override
  public void clean(HeldLock lock, boolean clean) {
    idleRelease.clean(lock, clean);
  }

  @Override
  public boolean watchExclusive(java.util.function.LongConsumer listener) {
    watch.watchExclusive(listener);
    return true;
  }

  /** Locks held now, for the shell. */
  public List<HeldLock> heldLocks() {
    return locks.held.values().stream().map(h -> h.lock).toList();
  }

  /** This service's etcd round-trip counters, for tests. */
  StoreCounts counts() {
    return counts;
  }

  /** This service's etcd round trips since it started, for the shell. */
  String roundTrips() {
    return counts.toString();
  }

  /** Recalls served by this node since it started (idle give-backs included). */
  public long recallsServed() {
    return recalls.served();
  }

  /** Exclusive locks this node has made shared in place since it started, for the shell. */
  public long downgrades() {
    return downgrades.count();
  }

  /** This node's locks, held and awaited, by inode (for the shell's {@code locks}). */
  @Override
  public List<LockState> locks() {
    return report.locks();
  }

  @Override
  public Map<String, String> counters() {
    return report.counters();
  }

  /** Every lock key in etcd, read now. */
  @Override
  public Optional<List<ClusterLock>> cluster() {
    return report.cluster();
  }

  /** The lock session's lease, while there is a live session. */
  @Override
  public List<LeaseReport.Lease> leases() {
    return report.leases();
  }

  /** Recalls served for one inode, while it is among the most recently recalled. */
  long recallsServed(long inode) {
    return recalls.served(inode);
  }

  String prefix() {
    return codec.prefix();
  }

  /** How many lock keys of {@code inode} this node's watch has shown, for tests. */
  int queuedInTable(long inode) {
    return table.queued(inode);
  }

  /** Inodes this node keeps state for (acquiring or holding), for tests of memory use. */
  int trackedInodes() {
    return locks.inodes.size();
  }

  /** Waits for the watch to have applied {@code revision}: woken by each batch it applies. */
  boolean awaitApplied(long revision, long timeoutMs) {
    return watch.awaitApplied(revision, timeoutMs);
  }

  @Deactivate
  void deactivate() {
    locks.close();
    watch.close();
    locks.wakeAll();
    timer.shutdownNow();
    recallPool.shutdownNow();
    idleReleases.shutdownNow();
    Session s = locks.current();
    if (s != null) {
      s.close(); // revoking the lease deletes every lock key at once
    }
    locks.held.clear();
  }

  /** Stops as a crashed node would: nothing released, the session's lease left to run out. */
  void halt() {
    locks.close();
    watch.close();
    locks.wakeAll();
    timer.shutdownNow();
    recallPool.shutdownNow();
    idleReleases.shutdownNow();
    Session s = locks.current();
    if (s != null) {
      s.halt();
    }
  }

  @Override
  public String toString() {
    return "etcd locks of " + fsName + " for " + nodeName + " on " + store.describe();
  }

  Duration sessionTtl() {
    return sessionTtl;
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }

  private static String required(String name, String value) {
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException(PID + ": " + name + " is not set");
    }
    return value;
  }

  private static Duration sessionTtl(int seconds) {
    if (seconds < 1) {
      throw new IllegalArgumentException(
          PID + ": sessionTtlSeconds must be at least 1, was " + seconds);
    }
    return Duration.ofSeconds(seconds);
  }
}

package io.etcfs.fencing.internal;

import io.etcfs.spi.fencing.DeadNode;
import io.etcfs.spi.fencing.FenceAgent;
import io.etcfs.spi.fencing.FenceException;
import io.etcfs.spi.fencing.Membership;
import io.etcfs.spi.fencing.RecoveryParticipant;
import io.etcfs.spi.lease.Deadline;
import io.etcfs.spi.meta.Compare;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.MetaStoreException;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.Txn;
import io.etcfs.spi.meta.TxnResult;
import io.etcfs.support.lease.LeaseKeeper;
import io.etcfs.support.retry.Backoff;
import java.io.IOException;
import java.io.StringReader;
import java.lang.System.Logger.Level;
import java.lang.System.Logger;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * The recovery of dead incarnations. A heartbeat slot ({@code slots/<k>}) whose generation (its
 * create revision) has no membership key any more belongs to an incarnation that ended without a
 * clean leave: its membership lease expired. For each, one live node, elected by creating
 * {@code recovery/<k>} under a lease of its own (whoever dies while recovering lets the key
 * expire, and the next one starts over), in this order:
 *
 * <ol>
 *   <li>runs the fence agent (bounded by {@code fenceTimeout});
 *   <li>waits until the node's device heartbeat says it fenced itself or left, or has not changed
 *       for {@code heartbeatTimeout} — a node that still beats is alive and cut off from etcd
 *       only, and its arenas stay out of reach until it stops ({@code heartbeatGiveUp}: then this
 *       attempt fails and is retried);
 *   <li>waits out the grace period, counted from when this node saw the incarnation dead: its
 *       own deadline passed before etcd expired its lease, and the grace lets device writes that
 *       passed the fenced check just before the deadline drain;
 *   <li>calls every {@link RecoveryParticipant} (arenas released, orphans purged, empty lock
 *       tables dropped); the configured required ones must be present;
 *   <li>in one transaction deletes the slot and the election key and records the fence in
 *       {@code fences/<node>/<generation>}.
 * </ol>
 *
 * <p>Inode locks are not gated on any of this: their 2 s lock sessions let survivors take a dead
 * node's files over long before its membership lease expires. A failed attempt is recorded in the
 * fence record ({@code result=failed: ...}) and retried after a growing back-off.
 */
final class Recovery {
  private static final Logger LOG = System.getLogger(Recovery.class.getName());
  /** TTL of the election key's lease: a dead recoverer's claim lapses this long after it died. */
  private static final Duration CLAIM_TTL = Duration.ofSeconds(10);
  /** After a failed recovery of one incarnation, the next try: 10 s, doubling to 5 min. */
  private static final Backoff RETRY = new Backoff(Duration.ofSeconds(10), Duration.ofMinutes(5));

  /**
   * @param agentSlack how much longer than {@code fenceTimeout} an agent call is waited for: the
   *     agent bounds itself by the timeout, the slack only guards against one that does not
   */
  record Timing(Duration fenceTimeout, Duration agentSlack, Duration heartbeatPeriod,
      Duration heartbeatTimeout, Duration heartbeatGiveUp, Duration grace) {}

  /** One attempt that could not finish; recorded and retried. */
  static final class Failed extends Exception {
    private static final long serialVersionUID = 1L;

    Failed(String message) {
      super(message);
    }
  }

  private final MetaStore store;
  private final FencingKeys keys;
  private final Membership membership;
  private final FenceAgent agent;
  private final HeartbeatDevice device;
  private final Supplier<List<RecoveryParticipant>> participants;
  private final Set<String> required;
  private final Timing timing;
  private final ExecutorService agentCalls;
  private final Map<Long, Long> retryAt = new ConcurrentHashMap<>();
  private final Map<Long, Integer> attempts = new ConcurrentHashMap<>();
  final RecoveryMetrics metrics = new RecoveryMetrics();
  private volatile boolean stopping;

  Recovery(MetaStore store, FencingKeys keys, Membership membership, FenceAgent agent,
      HeartbeatDevice device, Supplier<List<RecoveryParticipant>> participants,
      Set<String> required, Timing timing) {
    this.store = store;
    this.keys = keys;
    this.membership = membership;
    this.agent = agent;
    this.device = device;
    this.participants = participants;
    this.required = Set.copyOf(required);
    this.timing = timing;
    this.agentCalls = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "etcfs-fence-agent-" + membership.nodeName());
      t.setDaemon(true);
      return t;
    });
  }

  void stop() {
    stopping = true;
    agentCalls.shutdownNow();
  }

  /** Finds dead incarnations and recovers those this node wins the election for. */
  List<DeadNode> scanOnce() {
    // Slots and members read at one revision: a node that left between two reads must not look
    // dead (the claim compares the slot too, but this avoids the attempt).
    TxnResult r = store.commit(new Txn()
        .then(Op.rangePrefix(keys.slots()))
        .then(Op.rangePrefix(keys.members())));
    Map<String, KeyValue> members = new HashMap<>();
    for (KeyValue kv : r.ranges().get(1).kvs()) {
      members.put(FencingKeys.last(kv.keyString()), kv);
    }
    metrics.scanned(members.size(), r.ranges().get(0).kvs().size());
    List<DeadNode> recovered = new ArrayList<>();
    for (KeyValue slot : r.ranges().get(0).kvs()) {
      int index = FencingKeys.slotOf(slot.keyString());
      String node = slotNode(slot);
      long generation = slot.createRevision();
      KeyValue member = members.get(node);
      if (index < 0 || node == null || member != null && member.createRevision() == generation) {
        continue;
      }
      Long wait = retryAt.get(generation);
      if (wait != null && System.nanoTime() - wait < 0 || stopping || membership.isFenced()) {
        continue;
      }
      DeadNode dead = new DeadNode(node, generation);
      metrics.deadSeen();
      if (recover(index, dead, Optional.ofNullable(member))) {
        recovered.add(dead);
      }
    }
    return recovered;
  }

  private static String slotNode(KeyValue slot) {
    Properties p = new Properties();
    try {
      p.load(new StringReader(slot.valueString()));
    } catch (IOException | IllegalArgumentException e) {
      return null;
    }
    return p.getProperty("node");
  }

  private boolean recover(int slot, DeadNode dead, Optional<KeyValue> sameName) {
    long seenDead = System.nanoTime();
    Instant started = Instant.now();
    long claimLease = store.grantLease(CLAIM_TTL);
    Deadline claimDeadline = new Deadline(System::nanoTime, seenDead + CLAIM_TTL.toNanos());
    LeaseKeeper keeper = new LeaseKeeper(store, claimLease, CLAIM_TTL, claimDeadline,
        "etcfs-recovery-claim", reason -> LOG.log(Level.WARNING,
            "recovery claim of {0} lapsed: {1}", dead.node(), reason));
    FenceRecord record = new FenceRecord(dead, slot, membership, started, agent.name());
    try {
      long claim = claim(slot, dead, sameName, claimLease);
      if (claim == 0) {
        return false;
      }
      keeper.start();
      LOG.log(Level.INFO, "recovering {0} generation {1} (heartbeat slot {2}): elected",
          dead.node(), dead.generation(), slot);
      record.agent(fence(dead));
      record.heartbeat(heartbeatStopped(slot, dead));
      record.grace(graceFrom(seenDead));
      takeBack(dead, record);
      finish(slot, dead, claim, record);
      retryAt.remove(dead.generation());
      attempts.remove(dead.generation());
      metrics.recovered(System.nanoTime() - seenDead);
      LOG.log(Level.INFO, "recovered {0} generation {1} in {2}: {3}", dead.node(),
          dead.generation(), record.seconds(), record.summary());
      return true;
    } catch (Failed | MetaStoreException | IOException e) {
      failed(dead, record, e.getMessage());
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } finally {
      keeper.stop();
      try {
        store.revokeLease(claimLease);
      } catch (MetaStoreException e) {
        // the claim lapses with its lease's TTL
      }
    }
  }

  /** The election: returns the claim's revision, or 0 if someone else recovers it or it lives. */
  private long claim(int slot, DeadNode dead, Optional<KeyValue> sameName, long lease) {
    byte[] memberKey = keys.member(dead.node());
    Txn txn = new Txn()
        .when(Compare.absent(keys.recovery(slot)))
        .when(Compare.createRevision(membership.memberKey(), membership.generation()))
        .when(Compare.createRevision(keys.slot(slot), dead.generation()))
        .when(sameName.map(kv -> Compare.modRevision(memberKey, kv.modRevision()))
            .orElse(Compare.absent(memberKey)))
        .then(Op.put(keys.recovery(slot), MemberRecord.bytes("node=" + membership.nodeName()
            + "\ngeneration=" + membership.generation() + "\nstarted=" + Instant.now() + "\n"),
            lease));
    TxnResult r = store.commit(txn);
    return r.succeeded() ? r.revision() : 0;
  }

  private String fence(DeadNode dead) throws Failed, InterruptedException {
    long t0 = System.nanoTime();
    Duration timeout = timing.fenceTimeout();
    Future<?> call = agentCalls.submit(() -> {
      agent.fence(dead.node(), dead.generation(), timeout);
      return null;
    });
    try {
      // Nothing waits on fencing but the recovery of arenas: no survivor stalls meanwhile.
      call.get(timeout.plus(timing.agentSlack()).toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      throw new Failed("fence agent " + agent.name() + " failed: "
          + (cause instanceof FenceException ? cause.getMessage() : cause.toString()));
    } catch (TimeoutException e) {
      call.cancel(true);
      throw new Failed("fence agent " + agent.name() + " did not return within "
          + seconds(timeout.toNanos()));
    }
    return agent.name() + " ok in " + seconds(System.nanoTime() - t0);
  }

  /**
   * Waits until the incarnation's heartbeat says it fenced itself or left, or stopped changing
   * for {@code heartbeatTimeout}. Reads go to the device (O_DIRECT on block devices).
   */
  private String heartbeatStopped(int slot, DeadNode dead)
      throws IOException, Failed, InterruptedException {
    long start = System.nanoTime();
    Optional<Beat> last = device.read(slot);
    long changedAt = start;
    long poll = Math.max(1, timing.heartbeatPeriod().toMillis() / 2);
    while (true) {
      if (last.isPresent() && last.get().generation() == dead.generation()
          && last.get().state() != Beat.LIVE) {
        return "node wrote '" + last.get().stateName() + "' (beat " + last.get().counter() + ")";
      }
      long now = System.nanoTime();
      if (now - changedAt >= timing.heartbeatTimeout().toNanos()) {
        return last.filter(b -> b.generation() == dead.generation())
            .map(b -> "stopped at beat " + b.counter())
            .orElse("none of this generation")
            + ", unchanged for " + seconds(now - changedAt);
      }
      if (now - start >= timing.heartbeatGiveUp().toNanos()) {
        throw new Failed("heartbeat slot " + slot + " still changes after "
            + seconds(now - start) + ": the node reaches the device but is no longer a member "
            + "and has not fenced itself");
      }
      sleep(poll);
      Optional<Beat> next = device.read(slot);
      if (!next.equals(last)) {
        last = next;
        changedAt = System.nanoTime();
      }
    }
  }

  private String graceFrom(long seenDead) throws InterruptedException, Failed {
    long until = seenDead + timing.grace().toNanos();
    long left;
    while ((left = until - System.nanoTime()) > 0) {
      sleep(TimeUnit.NANOSECONDS.toMillis(left) + 1);
    }
    return timing.grace().toSeconds() + " s";
  }

  private void takeBack(DeadNode dead, FenceRecord record) throws Failed {
    List<RecoveryParticipant> present = participants.get();
    Set<String> missing = new TreeSet<>(required);
    present.forEach(p -> missing.remove(p.name()));
    if (!missing.isEmpty()) {
      throw new Failed("recovery participant(s) " + missing + " not available on "
          + membership.nodeName());
    }
    for (RecoveryParticipant p : present) {
      try {
        record.participant(p.name(), p.recover(dead));
      } catch (Exception e) {
        throw new Failed(p.name() + ": " + e.getMessage());
      }
    }
  }

  private void finish(int slot, DeadNode dead, long claim, FenceRecord record) throws Failed {
    TxnResult r = store.commit(new Txn()
        .when(Compare.createRevision(keys.recovery(slot), claim))
        .when(Compare.createRevision(keys.slot(slot), dead.generation()))
        .when(Compare.createRevision(membership.memberKey(), membership.generation()))
        .then(Op.delete(keys.slot(slot)))
        .then(Op.delete(keys.recovery(slot)))
        .then(Op.put(keys.fence(dead.node(), dead.generation()), record.done())));
    if (!r.succeeded()) {
      throw new Failed("lost the recovery claim or this node's membership before finishing");
    }
  }

  private void failed(DeadNode dead, FenceRecord record, String reason) {
    metrics.failed();
    int n = attempts.merge(dead.generation(), 1, Integer::sum);
    long backoff = RETRY.delay(n).toNanos();
    retryAt.put(dead.generation(), System.nanoTime() + backoff);
    LOG.log(Level.WARNING, "recovery of {0} generation {1} failed (attempt {2}): {3}; its "
        + "arenas stay out of reach; retrying in {4}", dead.node(), dead.generation(), n, reason,
        seconds(backoff));
    try {
      store.commit(new Txn()
          .when(Compare.createRevision(membership.memberKey(), membership.generation()))
          .then(Op.put(keys.fence(dead.node(), dead.generation()), record.failed(reason, n))));
    } catch (MetaStoreException e) {
      LOG.log(Level.WARNING, "cannot record the failed recovery: {0}", e.getMessage());
    }
  }

  private void sleep(long millis) throws InterruptedException, Failed {
    if (stopping) {
      throw new Failed("this node is stopping");
    }
    Thread.sleep(millis);
    if (stopping) {
      throw new Failed("this node is stopping");
    }
  }

  static String seconds(long nanos) {
    return String.format("%.1f s", nanos / 1e9);
  }
}

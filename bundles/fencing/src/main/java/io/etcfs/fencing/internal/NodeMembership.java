package io.etcfs.fencing.internal;

import io.etcfs.spi.blockdev.DeviceLayout;
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
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.lang.System.Logger;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * This node's membership: activation joins the cluster, deactivation leaves it cleanly.
 *
 * <p>Joining is one transaction that creates {@code /etcfs/<fs>/members/<node>} under a fresh
 * lease only if the key is absent, so two live nodes can never share a name, and takes a free
 * device heartbeat slot ({@code slots/<k>}, no lease: it stays held until a clean leave or the
 * recovery of this incarnation). Both keys' create revision is the generation every metadata
 * commit of this incarnation compares. Then the fence agent registers the incarnation (device
 * reservations) and the heartbeat starts beating in the slot.
 *
 * <p>When the node can no longer prove its lease alive (its own deadline, on the monotonic clock,
 * from when the last acknowledged keep-alive was sent) it is fenced for good: {@link #isFenced()}
 * turns true — the core then answers EIO and its device wrapper refuses all I/O — and the
 * heartbeat writes "fenced" and stops. To come back the node must leave and join again as a new
 * generation.
 */
@Component(
    service = Membership.class,
    immediate = true,
    configurationPid = NodeMembership.PID,
    configurationPolicy = ConfigurationPolicy.REQUIRE)
@Designate(ocd = NodeMembership.Config.class)
public final class NodeMembership implements Membership {
  static final String PID = "io.etcfs.fencing";
  private static final Logger LOG = System.getLogger(NodeMembership.class.getName());

  @ObjectClassDefinition(
      name = "etcfs membership",
      description = "This node's membership key and lease, and its self-fencing deadline.")
  @interface Config {
    @AttributeDefinition(description = "The filesystem's name: the first element of its keys.")
    String fsName();

    @AttributeDefinition(description = "This node's name, unique among live members.")
    String nodeName();

    @AttributeDefinition(description = "TTL of the membership lease.")
    int leaseTtlSeconds() default 10;

    @AttributeDefinition(description = "Where this node mounts the filesystem (recorded only).")
    String mountpoint();

    @AttributeDefinition(description = "Host name to record; empty: this machine's name.")
    String host() default "";

    @AttributeDefinition(description = "This node's metrics address (HOST:PORT) to record, for"
        + " etcfs top; empty: none.")
    String metrics() default "";

    @AttributeDefinition(description = "The shared device, for the heartbeat slot.")
    String device();

    @AttributeDefinition(description = "Milliseconds between device heartbeats.")
    int heartbeatMillis() default 1000;

    @AttributeDefinition(description = "Bound on each fence agent call, in seconds.")
    int fenceTimeoutSeconds() default 30;

    @AttributeDefinition(description = "Recovery: a heartbeat unchanged this long has stopped "
        + "(ms).")
    int heartbeatTimeoutMillis() default 4000;

    @AttributeDefinition(description = "Recovery: the longest wait for a heartbeat to stop (s).")
    int heartbeatGiveUpSeconds() default 60;

    @AttributeDefinition(description = "Recovery: seconds after a node is seen dead before its "
        + "arenas are reused.")
    int graceSeconds() default 5;

    @AttributeDefinition(description = "Recovery: seconds between looks for dead nodes.")
    int scanSeconds() default 2;

    @AttributeDefinition(description = "Recovery: participants that must take part "
        + "(comma-separated).")
    String requiredParticipants() default RecoveryParticipant.FILESYSTEM + ","
        + RecoveryParticipant.ALLOCATOR;
  }

  private final MetaStore store;
  private final String fsName;
  private final String nodeName;
  private final FencingKeys keys;
  private final byte[] memberKey;
  private final FenceAgent agent;
  private final Duration fenceTimeout;
  private final int slot;
  private final HeartbeatDevice heartbeatDevice;
  private final Heartbeat heartbeat;
  private final long lease;
  private final Duration ttl;
  private final long generation;
  private final Deadline deadline;
  private final LeaseKeeper keeper;
  private final AtomicBoolean ended = new AtomicBoolean();
  private final CompletableFuture<Void> done = new CompletableFuture<>();

  @Activate
  public NodeMembership(
      @Reference(name = "metaStore") MetaStore store,
      @Reference(name = "fenceAgent", target = "(" + FenceAgent.NAME + "=none)") FenceAgent agent,
      Config config) {
    this.store = store;
    this.agent = agent;
    this.fsName = Names.check(PID + ": fsName", config.fsName());
    this.nodeName = Names.check(PID + ": nodeName", config.nodeName());
    this.keys = new FencingKeys(fsName);
    this.memberKey = keys.member(nodeName);
    this.fenceTimeout = Duration.ofSeconds(positive("fenceTimeoutSeconds",
        config.fenceTimeoutSeconds()));
    int heartbeatMillis = positive("heartbeatMillis", config.heartbeatMillis());
    Path device = Path.of(required("device", config.device()));
    Duration ttl = ttl(config.leaseTtlSeconds());
    this.ttl = ttl;
    String record = record(config, ttl);
    // Opened before joining: a node that cannot beat must not join.
    this.heartbeatDevice = openHeartbeat(device);
    // The deadline starts before the grant is sent: the lease cannot have begun any earlier.
    this.deadline = new Deadline(System::nanoTime, System.nanoTime() + ttl.toNanos());
    this.lease = store.grantLease(ttl);
    Joined joined = joinOrRevoke(record);
    this.generation = joined.generation();
    this.slot = joined.slot();
    this.keeper =
        new LeaseKeeper(store, lease, ttl, deadline, "etcfs-membership-" + nodeName, this::fenced);
    keeper.start();
    this.heartbeat = new Heartbeat(heartbeatDevice, slot, nodeName, generation,
        heartbeatMillis, this::isFenced);
    try {
      agent.register(nodeName, generation, fenceTimeout);
      heartbeat.start();
    } catch (FenceException | IOException | RuntimeException e) {
      keeper.stop();
      withdraw();
      closeQuietly(heartbeatDevice);
      throw new IllegalStateException(nodeName + " cannot join " + fsName + ": "
          + (e instanceof FenceException ? "fence agent " + agent.name() + ": " : "heartbeat: ")
          + e.getMessage(), e);
    }
    LOG.log(Level.INFO, "{0} joined {1} as generation {2} (lease {3}, TTL {4} s, heartbeat slot "
            + "{5} on {6}, fence agent {7})", nodeName, fsName, generation,
        Long.toHexString(lease), ttl.toSeconds(), slot, heartbeatDevice, agent.name());
  }

  /**
   * A clean leave, after the core flushed and the allocator released its arenas (both depend on
   * this component, so they deactivate first): the heartbeat says "left", the fence agent
   * withdraws its registration, and one transaction deletes the membership key and the slot,
   * so no survivor starts a recovery; then the lease is revoked.
   */
  @Deactivate
  void leave() {
    boolean wasFenced = isFenced();
    keeper.stop();
    heartbeat.stop(wasFenced ? Beat.FENCED : Beat.LEFT);
    end();
    if (wasFenced) {
      // Nothing to withdraw: etcd has expired (or will expire) the lease with the key, recovery
      // frees the slot and the fence agent has preempted the registration. Asking etcd would
      // only wait out the request timeout on a node that may still be cut off.
      closeQuietly(heartbeatDevice);
      LOG.log(Level.WARNING, "{0} stopped as generation {1}, which had fenced itself: a "
          + "survivor recovers it", nodeName, generation);
      return;
    }
    try {
      agent.unregister(nodeName, generation, fenceTimeout);
    } catch (FenceException | RuntimeException e) {
      LOG.log(Level.WARNING, "{0}: fence agent {1} could not unregister generation {2}: {3}",
          nodeName, agent.name(), generation, e.getMessage());
    }
    boolean clean = withdraw();
    closeQuietly(heartbeatDevice);
    if (clean) {
      LOG.log(Level.INFO, "{0} left {1} (generation {2})", nodeName, fsName, generation);
    } else {
      LOG.log(Level.WARNING, "{0} left {1} as generation {2}, which was no longer a member: a "
          + "survivor recovers it", nodeName, fsName, generation);
    }
  }

  /** Deletes the membership key and the slot in one transaction, then revokes the lease. */
  private boolean withdraw() {
    boolean clean = false;
    try {
      clean = store.commit(new Txn()
          .when(Compare.createRevision(memberKey, generation))
          .when(Compare.createRevision(keys.slot(slot), generation))
          .then(Op.delete(memberKey))
          .then(Op.delete(keys.slot(slot)))).succeeded();
    } catch (MetaStoreException e) {
      LOG.log(Level.WARNING, "{0}: cannot delete membership and slot {1}: {2}", nodeName, slot,
          e.getMessage());
    }
    try {
      store.revokeLease(lease);
    } catch (MetaStoreException e) {
      LOG.log(Level.WARNING, "{0} left {1} without revoking lease {2}: it expires by itself: {3}",
          nodeName, fsName, Long.toHexString(lease), e.getMessage());
    }
    return clean;
  }

  @Override
  public String nodeName() {
    return nodeName;
  }

  @Override
  public byte[] memberKey() {
    return memberKey.clone();
  }

  @Override
  public long generation() {
    return generation;
  }

  @Override
  public boolean isFenced() {
    if (deadline.expired()) {
      fenced("no keep-alive was acknowledged before the lease deadline");
    }
    return ended.get();
  }

  @Override
  public CompletionStage<Void> done() {
    return done.copy();
  }

  long lease() {
    return lease;
  }

  /** The lease as this node sees it, for the shell's {@code leases}. */
  LeaseState leaseState() {
    return new LeaseState(lease, ttl, Duration.ofNanos(Math.max(0, deadline.at() - deadline.now())),
        keeper.lastAcknowledged().orElse(null), isFenced());
  }

  /**
   * @param left what is left by this node's own deadline (on the monotonic clock)
   * @param lastAcknowledged when the last acknowledged keep-alive was sent; null before one
   */
  record LeaseState(long id, Duration ttl, Duration left, Instant lastAcknowledged,
      boolean fenced) {}

  /** A crash, for tests: keep-alives and heartbeat stop, nothing is written or deleted. */
  void crash() {
    keeper.stop();
    heartbeat.halt();
    end();
    closeQuietly(heartbeatDevice);
  }

  int slot() {
    return slot;
  }

  private Joined joinOrRevoke(String record) {
    try {
      return join(record);
    } catch (RuntimeException e) {
      store.revokeLease(lease);
      closeQuietly(heartbeatDevice);
      throw e;
    }
  }

  static HeartbeatDevice openHeartbeat(Path device) {
    try {
      return HeartbeatDevice.open(device);
    } catch (IOException e) {
      throw new IllegalStateException("cannot open " + device + " for the device heartbeat: "
          + e.getMessage(), e);
    }
  }

  private static void closeQuietly(HeartbeatDevice d) {
    try {
      d.close();
    } catch (IOException e) {
      LOG.log(Level.WARNING, "closing heartbeat device: {0}", e.getMessage());
    }
  }

  /** What a join got: the incarnation's generation and its heartbeat slot. */
  private record Joined(long generation, int slot) {}

  private Joined join(String record) {
    byte[] slotValue = MemberRecord.bytes("node=" + nodeName + "\n");
    for (int attempt = 0; ; attempt++) {
      int free = freeSlot();
      TxnResult r = store.commit(new Txn()
          .when(Compare.absent(memberKey))
          .when(Compare.absent(keys.slot(free)))
          .then(Op.put(memberKey, MemberRecord.bytes(record), lease))
          .then(Op.put(keys.slot(free), slotValue)));
      if (r.succeeded()) {
        // Read back rather than trust the transaction's revision: this proves the key is ours.
        long generation = store.get(memberKey)
            .filter(kv -> kv.lease() == lease)
            .map(KeyValue::createRevision)
            .orElseThrow(() -> new IllegalStateException("membership key of " + nodeName
                + " in " + fsName + " vanished right after the join"));
        return new Joined(generation, free);
      }
      if (store.get(memberKey).isPresent()) {
        throw new IllegalStateException(
            "node name " + nodeName + " is already a member of " + fsName);
      }
      if (attempt >= 16) {
        throw new IllegalStateException(nodeName + " cannot join " + fsName
            + ": other nodes kept taking the free heartbeat slot first");
      }
      // Another node took that slot at the same moment: look again.
    }
  }

  private int freeSlot() {
    java.util.BitSet held = new java.util.BitSet();
    for (KeyValue kv : store.prefix(keys.slots(), 0).kvs()) {
      int s = FencingKeys.slotOf(kv.keyString());
      if (s >= 0) {
        held.set(s);
      }
    }
    int free = held.nextClearBit(0);
    if (free >= DeviceLayout.HEARTBEAT_SLOTS) {
      throw new IllegalStateException(nodeName + " cannot join " + fsName + ": all "
          + DeviceLayout.HEARTBEAT_SLOTS + " device heartbeat slots are held (by members, or by "
          + "dead nodes whose recovery has not finished: see the node logs)");
    }
    return free;
  }

  private void fenced(String reason) {
    deadline.expire();
    if (end()) {
      LOG.log(Level.ERROR, "{0} fenced itself out of {1} (generation {2}): {3}; device I/O "
          + "stopped, every call answers EIO; unmount and mount again to rejoin as a new "
          + "generation", nodeName, fsName, generation, reason);
    }
    Heartbeat h = heartbeat;
    if (h != null) {
      h.wake();
    }
  }

  private boolean end() {
    deadline.expire();
    boolean first = ended.compareAndSet(false, true);
    done.complete(null);
    return first;
  }

  private String record(Config config, Duration ttl) {
    String mountpoint = config.mountpoint() == null ? "" : config.mountpoint();
    return MemberRecord.text(
        MemberRecord.host(config.host()),
        ProcessHandle.current().pid(),
        mountpoint,
        Instant.now(),
        ttl,
        config.metrics() == null ? "" : config.metrics().strip());
  }

  private static String required(String property, String value) {
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException(PID + ": " + property + " is not set");
    }
    return value;
  }

  static int positive(String property, int value) {
    if (value < 1) {
      throw new IllegalArgumentException(PID + ": " + property + " must be at least 1, was "
          + value);
    }
    return value;
  }

  private static Duration ttl(int seconds) {
    if (seconds < 1) {
      throw new IllegalArgumentException(PID + ": leaseTtlSeconds must be at least 1, was "
          + seconds);
    }
    return Duration.ofSeconds(seconds);
  }

  @Override
  public String toString() {
    return nodeName + " in " + fsName + " generation " + generation;
  }
}

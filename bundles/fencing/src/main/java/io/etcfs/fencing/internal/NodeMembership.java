package io.etcfs.fencing.internal;

import io.etcfs.spi.fencing.Membership;
import io.etcfs.spi.lease.Deadline;
import io.etcfs.spi.lease.LeaseKeeper;
import io.etcfs.spi.meta.Compare;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.MetaStoreException;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.Txn;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
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
 * lease only if the key is absent, so two live nodes can never share a name; the key's create
 * revision is the generation every metadata commit of this incarnation compares. When the node
 * can no longer prove its lease alive it marks itself fenced for good. What a fenced node must
 * then do (stop device I/O and the device heartbeat, fail FUSE calls with EIO, rejoin as a new
 * generation) is built in issue #5 on top of {@link #done()}.
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
  }

  private final MetaStore store;
  private final String fsName;
  private final String nodeName;
  private final byte[] memberKey;
  private final long lease;
  private final long generation;
  private final Deadline deadline;
  private final LeaseKeeper keeper;
  private final AtomicBoolean ended = new AtomicBoolean();
  private final CompletableFuture<Void> done = new CompletableFuture<>();

  @Activate
  public NodeMembership(@Reference(name = "metaStore") MetaStore store, Config config) {
    this.store = store;
    this.fsName = Names.check(PID + ": fsName", config.fsName());
    this.nodeName = Names.check(PID + ": nodeName", config.nodeName());
    this.memberKey = Keys.of("/etcfs/" + fsName + "/members/" + nodeName);
    Duration ttl = ttl(config.leaseTtlSeconds());
    String record = record(config, ttl);
    // The deadline starts before the grant is sent: the lease cannot have begun any earlier.
    this.deadline = new Deadline(System::nanoTime, System.nanoTime() + ttl.toNanos());
    this.lease = store.grantLease(ttl);
    this.generation = joinOrRevoke(record);
    this.keeper =
        new LeaseKeeper(store, lease, ttl, deadline, "etcfs-membership-" + nodeName, this::fenced);
    keeper.start();
    LOG.log(Level.INFO, "{0} joined {1} as generation {2} (lease {3}, TTL {4} s)",
        nodeName, fsName, generation, Long.toHexString(lease), ttl.toSeconds());
  }

  /** A clean leave: revoking the lease deletes the membership key with it. */
  @Deactivate
  void leave() {
    keeper.stop();
    try {
      store.revokeLease(lease);
    } catch (MetaStoreException e) {
      LOG.log(Level.WARNING, "{0} left {1} without revoking lease {2}: it expires by itself: {3}",
          nodeName, fsName, Long.toHexString(lease), e.getMessage());
    }
    end();
    LOG.log(Level.INFO, "{0} left {1} (generation {2})", nodeName, fsName, generation);
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

  private long joinOrRevoke(String record) {
    try {
      return join(record);
    } catch (RuntimeException e) {
      store.revokeLease(lease);
      throw e;
    }
  }

  private long join(String record) {
    Txn join =
        new Txn()
            .when(Compare.absent(memberKey))
            .then(Op.put(memberKey, MemberRecord.bytes(record), lease));
    if (!store.commit(join).succeeded()) {
      throw new IllegalStateException(
          "node name " + nodeName + " is already a member of " + fsName);
    }
    // Read back rather than trust the transaction's revision: this also proves the key is ours.
    return store.get(memberKey)
        .filter(kv -> kv.lease() == lease)
        .map(KeyValue::createRevision)
        .orElseThrow(() -> new IllegalStateException(
            "membership key of " + nodeName + " in " + fsName + " vanished right after the join"));
  }

  private void fenced(String reason) {
    deadline.expire();
    if (end()) {
      LOG.log(Level.ERROR, "{0} fenced itself out of {1} (generation {2}): {3}",
          nodeName, fsName, generation, reason);
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
        ttl);
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

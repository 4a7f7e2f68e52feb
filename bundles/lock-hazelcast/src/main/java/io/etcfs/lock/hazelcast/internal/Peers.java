package io.etcfs.lock.hazelcast.internal;

import com.hazelcast.cluster.Address;
import com.hazelcast.config.properties.PropertyDefinition;
import com.hazelcast.logging.ILogger;
import com.hazelcast.spi.discovery.AbstractDiscoveryStrategy;
import com.hazelcast.spi.discovery.DiscoveryNode;
import com.hazelcast.spi.discovery.DiscoveryStrategy;
import com.hazelcast.spi.discovery.DiscoveryStrategyFactory;
import com.hazelcast.spi.discovery.SimpleDiscoveryNode;
import io.etcfs.spi.fs.Keyspace;
import io.etcfs.spi.lease.Deadline;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.MetaStoreException;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.Txn;
import io.etcfs.support.lease.LeaseKeeper;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * How the members find each other: through etcd, where every node already is. Each node puts
 * {@code hazelcast/<node>} = {@code host:port} under a lease of its own before its member
 * starts, and the member's discovery reads that prefix every time Hazelcast asks (at the join and
 * at each split-brain merge check), so a member started at the same moment as another, or
 * restarted on another port, is still found. No multicast, no list to keep by hand.
 */
final class Peers {
  private static final Logger LOG = System.getLogger(Peers.class.getName());
  /** The registration's lease: a dead node's address goes after this long. */
  private static final Duration TTL = Duration.ofSeconds(10);

  private final MetaStore store;
  private final Keyspace space;
  private final String node;
  private final String address;
  private final long lease;
  private final LeaseKeeper keeper;

  private Peers(MetaStore store, Keyspace space, String node, String address, long lease,
      LeaseKeeper keeper) {
    this.store = store;
    this.space = space;
    this.node = node;
    this.address = address;
    this.lease = lease;
    this.keeper = keeper;
  }

  /** Registers {@code host:port} as {@code node}'s member address and keeps it registered. */
  static Peers register(MetaStore store, Keyspace space, String node, String host, int port) {
    long sentAt = System.nanoTime();
    long lease = store.grantLease(TTL);
    Deadline deadline = new Deadline(System::nanoTime, sentAt + TTL.toNanos());
    String address = host + ":" + port;
    LeaseKeeper keeper = new LeaseKeeper(store, lease, TTL, deadline,
        "etcfs-hazelcast-peers", reason -> LOG.log(Level.WARNING,
            "this node''s Hazelcast address left etcd ({0}): members starting now will not"
            + " find it", reason));
    store.commit(new Txn().then(Op.put(key(space, node), bytes(address), lease)));
    keeper.start();
    return new Peers(store, space, node, address, lease, keeper);
  }

  static byte[] key(Keyspace space, String node) {
    return space.bytes(Keyspace.HAZELCAST + node);
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  String address() {
    return address;
  }

  /** Every registered member's address, this node's included. */
  List<String> addresses() {
    List<String> all = new ArrayList<>();
    for (KeyValue kv : store.prefix(space.bytes(Keyspace.HAZELCAST), 0).kvs()) {
      all.add(kv.valueString());
    }
    return all;
  }

  /** Takes the registration out of etcd (a clean leave). */
  void close() {
    keeper.stop();
    try {
      store.revokeLease(lease);
    } catch (MetaStoreException e) {
      // the registration runs out with its lease's TTL
    }
  }

  /** The discovery Hazelcast calls, over {@link #addresses}. */
  DiscoveryStrategyFactory discovery() {
    return new Factory();
  }

  private final class Factory implements DiscoveryStrategyFactory {
    @Override
    public Class<? extends DiscoveryStrategy> getDiscoveryStrategyType() {
      return Strategy.class;
    }

    @Override
    public DiscoveryStrategy newDiscoveryStrategy(DiscoveryNode self, ILogger logger,
        @SuppressWarnings("rawtypes") Map<String, Comparable> properties) {
      return new Strategy(logger, properties);
    }

    @Override
    public Collection<PropertyDefinition> getConfigurationProperties() {
      return List.of();
    }
  }

  private final class Strategy extends AbstractDiscoveryStrategy {
    Strategy(ILogger logger, @SuppressWarnings("rawtypes") Map<String, Comparable> properties) {
      super(logger, properties);
    }

    @Override
    public Iterable<DiscoveryNode> discoverNodes() {
      List<DiscoveryNode> found = new ArrayList<>();
      List<String> all;
      try {
        all = addresses();
      } catch (MetaStoreException e) {
        LOG.log(Level.WARNING, "cannot read the Hazelcast members from etcd: {0}",
            e.getMessage());
        return found;
      }
      for (String a : all) {
        int colon = a.lastIndexOf(':');
        try {
          found.add(new SimpleDiscoveryNode(
              new Address(a.substring(0, colon), Integer.parseInt(a.substring(colon + 1)))));
        } catch (UnknownHostException | RuntimeException e) {
          LOG.log(Level.WARNING, "ignoring Hazelcast member address ''{0}'': {1}", a,
              e.getMessage());
        }
      }
      return found;
    }
  }

  @Override
  public String toString() {
    return node + " at " + address;
  }
}

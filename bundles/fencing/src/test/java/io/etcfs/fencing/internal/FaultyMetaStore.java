package io.etcfs.fencing.internal;

import io.etcfs.support.meta.ForwardingMetaStore;
import io.etcfs.testing.MemoryMetaStore;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongUnaryOperator;

/**
 * The in-memory store with keep-alive answers a test can replace, to play an etcd that is slow
 * or unreachable while its leases keep running out on the clock.
 */
final class FaultyMetaStore extends ForwardingMetaStore {
  private final MemoryMetaStore memory;
  private final Set<Long> liveLeases = ConcurrentHashMap.newKeySet();
  private final AtomicInteger keepAlives = new AtomicInteger();
  private volatile LongUnaryOperator keepAlive;

  FaultyMetaStore() {
    this(new MemoryMetaStore());
  }

  private FaultyMetaStore(MemoryMetaStore memory) {
    super(memory);
    this.memory = memory;
    this.keepAlive = memory::keepAliveOnce;
  }

  @Override
  public long grantLease(Duration ttl) {
    long lease = memory.grantLease(ttl);
    liveLeases.add(lease);
    return lease;
  }

  @Override
  public long keepAliveOnce(long lease) {
    keepAlives.incrementAndGet();
    return keepAlive.applyAsLong(lease);
  }

  @Override
  public void revokeLease(long lease) {
    liveLeases.remove(lease);
    memory.revokeLease(lease);
  }

  /** Leases granted and not revoked through this store (expiry is not tracked). */
  Set<Long> grantedLeases() {
    return Set.copyOf(liveLeases);
  }

  void expireLease(long lease) {
    memory.expireLease(lease);
  }

  int keepAlives() {
    return keepAlives.get();
  }

  /** Keep-alives of {@code lease} fail as if etcd were unreachable; the others are answered. */
  void failKeepAlivesOf(long lease) {
    keepAlive = l -> {
      if (l == lease) {
        throw new io.etcfs.spi.meta.MetaStoreException(
            io.etcfs.spi.meta.MetaStoreException.Kind.UNAVAILABLE, "etcd unreachable");
      }
      return memory.keepAliveOnce(l);
    };
  }

  void answerKeepAlives(LongUnaryOperator answer) {
    keepAlive = answer;
  }

  void close() {
    memory.close();
  }
}

package io.etcfs.fencing.internal;

import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.RangeResult;
import io.etcfs.spi.meta.Txn;
import io.etcfs.spi.meta.TxnResult;
import io.etcfs.spi.meta.Watch;
import io.etcfs.spi.meta.WatchListener;
import io.etcfs.testing.MemoryMetaStore;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongUnaryOperator;

/**
 * The in-memory store with keep-alive answers a test can replace, to play an etcd that is slow
 * or unreachable while its leases keep running out on the clock.
 */
final class FaultyMetaStore implements MetaStore {
  private final MemoryMetaStore memory = new MemoryMetaStore();
  private final Set<Long> liveLeases = ConcurrentHashMap.newKeySet();
  private final AtomicInteger keepAlives = new AtomicInteger();
  private volatile LongUnaryOperator keepAlive = memory::keepAliveOnce;

  @Override
  public Optional<KeyValue> get(byte[] key) {
    return memory.get(key);
  }

  @Override
  public RangeResult range(byte[] from, byte[] to, int limit) {
    return memory.range(from, to, limit);
  }

  @Override
  public TxnResult commit(Txn txn) {
    return memory.commit(txn);
  }

  @Override
  public Watch watch(byte[] prefix, long fromRevision, WatchListener listener) {
    return memory.watch(prefix, fromRevision, listener);
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

  @Override
  public String describe() {
    return memory.describe();
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

  void answerKeepAlives(LongUnaryOperator answer) {
    keepAlive = answer;
  }

  void close() {
    memory.close();
  }
}

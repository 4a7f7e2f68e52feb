package io.etcfs.support.meta;

import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.RangeResult;
import io.etcfs.spi.meta.Txn;
import io.etcfs.spi.meta.TxnResult;
import io.etcfs.spi.meta.Watch;
import io.etcfs.spi.meta.WatchListener;
import java.time.Duration;
import java.util.Optional;

/**
 * A store that passes every call on, for decorators that change a few: the core counts its round
 * trips through one, tests slow or break calls with others.
 */
public class ForwardingMetaStore implements MetaStore {
  protected final MetaStore delegate;

  public ForwardingMetaStore(MetaStore delegate) {
    this.delegate = delegate;
  }

  @Override
  public Optional<KeyValue> get(byte[] key) {
    return delegate.get(key);
  }

  @Override
  public RangeResult range(byte[] from, byte[] to, int limit) {
    return delegate.range(from, to, limit);
  }

  @Override
  public TxnResult commit(Txn txn) {
    return delegate.commit(txn);
  }

  @Override
  public Watch watch(byte[] prefix, long fromRevision, WatchListener listener) {
    return delegate.watch(prefix, fromRevision, listener);
  }

  @Override
  public long grantLease(Duration ttl) {
    return delegate.grantLease(ttl);
  }

  @Override
  public long keepAliveOnce(long lease) {
    return delegate.keepAliveOnce(lease);
  }

  @Override
  public long leaseTimeToLive(long lease) {
    return delegate.leaseTimeToLive(lease);
  }

  @Override
  public void revokeLease(long lease) {
    delegate.revokeLease(lease);
  }

  @Override
  public String describe() {
    return delegate.describe();
  }
}

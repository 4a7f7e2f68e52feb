package io.etcfs.lock.etcd.internal;

import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.RangeResult;
import io.etcfs.spi.meta.Txn;
import io.etcfs.spi.meta.TxnResult;
import io.etcfs.support.meta.ForwardingMetaStore;
import java.util.Optional;
import java.util.concurrent.atomic.LongAdder;

/**
 * The lock service's store, counting its round trips to etcd (shell {@code locks}), as the
 * core's {@code stats} counts the engine's: together they are what a file operation costs.
 */
final class StoreCounts extends ForwardingMetaStore {
  final LongAdder gets = new LongAdder();
  final LongAdder ranges = new LongAdder();
  final LongAdder commits = new LongAdder();

  StoreCounts(MetaStore delegate) {
    super(delegate);
  }

  @Override
  public Optional<KeyValue> get(byte[] key) {
    gets.increment();
    return delegate.get(key);
  }

  @Override
  public RangeResult range(byte[] from, byte[] to, int limit) {
    ranges.increment();
    return delegate.range(from, to, limit);
  }

  @Override
  public TxnResult commit(Txn txn) {
    commits.increment();
    return delegate.commit(txn);
  }

  @Override
  public String toString() {
    return String.format("%,d reads, %,d range reads, %,d transactions", gets.sum(),
        ranges.sum(), commits.sum());
  }
}

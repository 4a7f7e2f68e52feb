package io.etcfs.lock.etcd.internal;

import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.RangeResult;
import io.etcfs.support.meta.ForwardingMetaStore;
import io.etcfs.testing.MemoryMetaStore;
import org.junit.jupiter.api.AfterEach;

/**
 * The lock contract on a store whose range answers arrive late, as on a loaded machine: watch
 * events then overtake reads, which is where a grant and a new request can cross.
 */
class SlowReadsLockContractTest extends EtcdBackendContract {
  private final MemoryMetaStore memory = new MemoryMetaStore();
  private final MetaStore slow = new ForwardingMetaStore(memory) {
    @Override
    public RangeResult range(byte[] from, byte[] to, int limit) {
      RangeResult r = delegate.range(from, to, limit);
      try {
        Thread.sleep(15);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return r;
    }
  };

  @AfterEach
  void closeStore() {
    memory.close();
  }

  @Override
  protected MetaStore store() {
    return memory;
  }

  @Override
  protected MetaStore nodeStore() {
    return slow;
  }
}

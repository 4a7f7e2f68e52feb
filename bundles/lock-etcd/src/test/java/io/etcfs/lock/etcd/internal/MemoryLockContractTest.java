package io.etcfs.lock.etcd.internal;

import io.etcfs.spi.meta.MetaStore;
import io.etcfs.testing.MemoryMetaStore;
import org.junit.jupiter.api.AfterEach;

/** The lock contract for the etcd backend, on the in-memory store. */
class MemoryLockContractTest extends EtcdBackendContract {
  private final MemoryMetaStore store = new MemoryMetaStore();

  @AfterEach
  void closeStore() {
    store.close();
  }

  @Override
  protected MetaStore store() {
    return store;
  }
}

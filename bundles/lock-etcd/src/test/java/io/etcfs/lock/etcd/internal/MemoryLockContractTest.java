package io.etcfs.lock.etcd.internal;

import io.etcfs.spi.lock.LockService;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.testing.LockServiceContract;
import io.etcfs.testing.MemoryMetaStore;
import org.junit.jupiter.api.AfterEach;

/** The lock contract for the etcd backend, on the in-memory store. */
class MemoryLockContractTest extends LockServiceContract {
  private final MemoryMetaStore store = new MemoryMetaStore();

  @AfterEach
  void closeStore() {
    store.close();
  }

  @Override
  protected MetaStore store() {
    return store;
  }

  @Override
  protected LockService newNode(String name) {
    return new EtcdLockService(store, EtcdLockServiceTest.config("contract", name, 2));
  }

  @Override
  protected void crash(LockService node) {
    ((EtcdLockService) node).halt();
  }

  @Override
  protected void stop(LockService node) {
    ((EtcdLockService) node).deactivate();
  }
}

package io.etcfs.lock.etcd.internal;

import io.etcfs.etcd.internal.EtcdMetaStore;
import io.etcfs.etcd.internal.EtcdSettings;
import io.etcfs.spi.lock.LockService;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.testing.EtcdCluster;
import io.etcfs.testing.EtcdExtension;
import io.etcfs.testing.LockServiceContract;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;

/** The lock contract for the etcd backend, on a real etcd. */
@ExtendWith(EtcdExtension.class)
class EtcdLockContractTest extends LockServiceContract {
  private static EtcdMetaStore store;

  @BeforeAll
  static void connect(EtcdCluster etcd) {
    store = EtcdMetaStore.connect(EtcdSettings.of(etcd.endpoints()));
  }

  @AfterAll
  static void disconnect() {
    if (store != null) {
      store.close();
    }
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

package io.etcfs.lock.etcd.internal;

import io.etcfs.spi.meta.MetaStore;
import io.etcfs.testing.EtcdCluster;
import io.etcfs.testing.EtcdExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;

/** The lock contract for the etcd backend, on a real etcd. */
@ExtendWith(EtcdExtension.class)
class EtcdLockContractTest extends EtcdBackendContract {
  private static MetaStore store;

  /** The extension closes the store after the class. */
  @BeforeAll
  static void connect(EtcdCluster etcd) {
    store = etcd.newStore();
  }

  @Override
  protected MetaStore store() {
    return store;
  }
}

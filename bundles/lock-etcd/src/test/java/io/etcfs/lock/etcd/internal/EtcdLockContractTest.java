package io.etcfs.lock.etcd.internal;

import io.etcfs.etcd.client.EtcdMetaStore;
import io.etcfs.etcd.client.EtcdSettings;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.testing.EtcdCluster;
import io.etcfs.testing.EtcdExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;

/** The lock contract for the etcd backend, on a real etcd. */
@ExtendWith(EtcdExtension.class)
class EtcdLockContractTest extends EtcdBackendContract {
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
}

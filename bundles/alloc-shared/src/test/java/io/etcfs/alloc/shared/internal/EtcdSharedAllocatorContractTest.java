package io.etcfs.alloc.shared.internal;

import io.etcfs.etcd.client.EtcdMetaStore;
import io.etcfs.etcd.client.EtcdSettings;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.testing.EtcdCluster;
import io.etcfs.testing.EtcdExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;

/** The allocator contract for alloc-shared, on a real etcd. */
@ExtendWith(EtcdExtension.class)
class EtcdSharedAllocatorContractTest extends SharedAllocatorContract {
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

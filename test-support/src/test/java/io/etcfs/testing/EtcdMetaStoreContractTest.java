package io.etcfs.testing;

import io.etcfs.spi.meta.MetaStore;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(EtcdExtension.class)
class EtcdMetaStoreContractTest extends MetaStoreContract {
  private static MetaStore store;

  @BeforeAll
  static void connect(EtcdCluster etcd) {
    store = etcd.newStore();
  }

  @Override
  protected MetaStore store() {
    return store;
  }
}

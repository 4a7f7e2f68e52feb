package io.etcfs.testing;

import io.etcfs.spi.meta.MetaStore;
import org.junit.jupiter.api.AfterEach;

class MemoryMetaStoreTest extends MetaStoreContract {
  private final MemoryMetaStore store = new MemoryMetaStore();

  @Override
  protected MetaStore store() {
    return store;
  }

  @AfterEach
  void close() {
    store.close();
  }
}

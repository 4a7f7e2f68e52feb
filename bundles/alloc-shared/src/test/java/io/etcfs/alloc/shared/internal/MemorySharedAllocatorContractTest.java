package io.etcfs.alloc.shared.internal;

import io.etcfs.spi.meta.MetaStore;
import io.etcfs.testing.MemoryMetaStore;
import org.junit.jupiter.api.AfterEach;

/** The allocator contract for alloc-shared on the in-memory store. */
class MemorySharedAllocatorContractTest extends SharedAllocatorContract {
  private final MemoryMetaStore store = new MemoryMetaStore();

  @AfterEach
  void close() {
    store.close();
  }

  @Override
  protected MetaStore store() {
    return store;
  }
}

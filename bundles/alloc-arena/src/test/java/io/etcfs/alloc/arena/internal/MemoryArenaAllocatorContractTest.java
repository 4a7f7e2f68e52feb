package io.etcfs.alloc.arena.internal;

import io.etcfs.spi.meta.MetaStore;
import io.etcfs.testing.MemoryMetaStore;
import org.junit.jupiter.api.AfterEach;

/** The allocator contract for alloc-arena, on the in-memory store. */
class MemoryArenaAllocatorContractTest extends ArenaAllocatorContract {
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

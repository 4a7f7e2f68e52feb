package io.etcfs.lock.etcd.internal;

import io.etcfs.spi.lock.LockService;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.testing.LockServiceContract;

/**
 * The lock contract for the etcd backend: nodes are {@link EtcdLockService}s on {@link
 * #nodeStore()} (the store the contract checks commits against, unless a subclass puts something
 * between them), a crash halts a node without releasing anything.
 */
abstract class EtcdBackendContract extends LockServiceContract {

  /** The store the nodes use; the contract's {@link #store()} by default. */
  protected MetaStore nodeStore() {
    return store();
  }

  @Override
  protected LockService newNode(String name) {
    return new EtcdLockService(nodeStore(), EtcdLockServiceTest.config("contract", name, 2));
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

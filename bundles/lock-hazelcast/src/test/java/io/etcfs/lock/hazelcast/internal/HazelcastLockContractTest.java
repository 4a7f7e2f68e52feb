package io.etcfs.lock.hazelcast.internal;

import io.etcfs.spi.lock.LockService;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.testing.ComponentConfigs;
import io.etcfs.testing.LockServiceContract;
import io.etcfs.testing.MemoryMetaStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;

/**
 * The lock contract for the Hazelcast backend: each node a {@link HazelcastLockService} with a
 * member of its own on loopback, finding the others through the shared store as nodes find each
 * other through etcd; a new cluster per test. A crash terminates the member and stops the
 * session's renewals without releasing anything.
 */
class HazelcastLockContractTest extends LockServiceContract {
  private static final AtomicInteger FILESYSTEMS = new AtomicInteger();
  private final MemoryMetaStore memory = new MemoryMetaStore();
  private final String fs = "hz" + FILESYSTEMS.incrementAndGet();
  private final List<HazelcastLockService> all = new ArrayList<>();

  @AfterEach
  void closeStore() {
    memory.close();
  }

  @Override
  protected MetaStore store() {
    return memory;
  }

  @Override
  protected LockService newNode(String name) {
    HazelcastLockService node = new HazelcastLockService(memory, config(fs, name));
    all.add(node);
    return node;
  }

  static HazelcastLockService.Config config(String fs, String node) {
    return ComponentConfigs.of(HazelcastLockService.Config.class,
        Map.of("fsName", fs, "nodeName", node, "address", "127.0.0.1"));
  }

  @Override
  protected void crash(LockService node) {
    ((HazelcastLockService) node).halt();
  }

  @Override
  protected void stop(LockService node) {
    ((HazelcastLockService) node).deactivate();
  }

  @Override
  protected int queued(long ino) {
    for (HazelcastLockService node : all) {
      try {
        return node.queued(ino);
      } catch (IllegalStateException stopped) {
        // a crashed node: ask another
      }
    }
    return 0;
  }
}

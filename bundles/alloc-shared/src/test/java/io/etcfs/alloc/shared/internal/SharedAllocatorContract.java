package io.etcfs.alloc.shared.internal;

import io.etcfs.spi.alloc.Allocator;
import io.etcfs.spi.fencing.RecoveryParticipant;
import io.etcfs.spi.fs.Keyspace;
import io.etcfs.testing.AllocatorContract;
import io.etcfs.testing.ComponentConfigs;
import io.etcfs.testing.TestMembership;
import java.util.List;
import java.util.Map;

/** The allocator contract for alloc-shared; a crash halts the allocator without releasing. */
abstract class SharedAllocatorContract extends AllocatorContract {
  static SharedAllocator.Config config(String fs, String node) {
    return ComponentConfigs.of(SharedAllocator.Config.class,
        Map.of("fsName", fs, "nodeName", node));
  }

  @Override
  protected Allocator newAllocator(String fs, TestMembership membership) {
    return new SharedAllocator(store(), membership, config(fs, membership.nodeName()));
  }

  @Override
  protected Allocator newStandby(String fs, TestMembership membership) {
    return new SharedAllocator(store(), membership, ComponentConfigs.of(
        SharedAllocator.Config.class, Map.of("fsName", fs, "nodeName", membership.nodeName(),
            Allocator.STANDBY, true)));
  }

  @Override
  protected List<String> stateAreas() {
    return List.of(Keyspace.FREE_MAP);
  }

  @Override
  protected RecoveryParticipant recovery(String fs, TestMembership membership) {
    return new SharedRecovery(store(), membership, config(fs, membership.nodeName()));
  }

  @Override
  protected void crash(Allocator allocator) {
    ((SharedAllocator) allocator).halt();
  }

  @Override
  protected void stop(Allocator allocator) {
    ((SharedAllocator) allocator).deactivate();
  }
}

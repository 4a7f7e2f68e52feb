package io.etcfs.alloc.arena.internal;

import io.etcfs.spi.alloc.Allocator;
import io.etcfs.spi.fencing.RecoveryParticipant;
import io.etcfs.spi.fs.Keyspace;
import io.etcfs.testing.AllocatorContract;
import io.etcfs.testing.TestMembership;
import java.util.List;

/**
 * The allocator contract for alloc-arena: a node out of space asks the others for 300 ms (the
 * contract runs the device full on purpose), a crash halts the allocator without releasing.
 */
abstract class ArenaAllocatorContract extends AllocatorContract {
  @Override
  protected Allocator newAllocator(String fs, TestMembership membership) {
    return new ArenaAllocator(store(), membership,
        TestFs.config(fs, membership.nodeName(), 60, 0, 300, true));
  }

  @Override
  protected Allocator newStandby(String fs, TestMembership membership) {
    return new ArenaAllocator(store(), membership,
        TestFs.config(fs, membership.nodeName(), 60, 0, 300, true, true));
  }

  @Override
  protected List<String> stateAreas() {
    return List.of(Keyspace.ARENAS, Keyspace.WANTS);
  }

  @Override
  protected RecoveryParticipant recovery(String fs, TestMembership membership) {
    return new ArenaRecovery(store(), membership, TestFs.config(fs, membership.nodeName(), 60, 0));
  }

  @Override
  protected void crash(Allocator allocator) {
    ((ArenaAllocator) allocator).halt();
  }

  @Override
  protected void stop(Allocator allocator) {
    ((ArenaAllocator) allocator).deactivate();
  }
}

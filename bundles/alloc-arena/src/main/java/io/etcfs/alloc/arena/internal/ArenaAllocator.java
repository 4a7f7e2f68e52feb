package io.etcfs.alloc.arena.internal;

import io.etcfs.spi.alloc.Allocator;
import io.etcfs.spi.alloc.Extent;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.Op;
import java.util.List;
import java.util.Objects;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * Allocation from per-node arenas claimed in etcd. This stage registers the backend so the core
 * can select it; claiming arenas, the in-memory free map and reclaiming a dead node's arenas are
 * issue #3. Even the block counts throw rather than guess, so {@code statfs} can never report
 * space that nothing has measured.
 */
@Component(
    service = Allocator.class,
    configurationPid = ArenaAllocator.PID,
    configurationPolicy = ConfigurationPolicy.REQUIRE,
    property = Allocator.BACKEND + "=" + ArenaAllocator.BACKEND_NAME)
@Designate(ocd = ArenaAllocator.Config.class)
public final class ArenaAllocator implements Allocator {
  static final String PID = "io.etcfs.alloc.arena";
  static final String BACKEND_NAME = "arena";
  static final String NOT_YET = "block allocation from arenas is built in issue #3 (alloc-arena)";

  @ObjectClassDefinition(
      name = "etcfs allocator: arenas",
      description = "Allocates device blocks from per-node arenas claimed in etcd.")
  @interface Config {
    @AttributeDefinition(description = "The filesystem's name: the first element of its keys.")
    String fsName();

    @AttributeDefinition(description = "This node's name: the owner recorded on its arenas.")
    String nodeName();
  }

  private final MetaStore store;
  private final String fsName;
  private final String nodeName;

  @Activate
  public ArenaAllocator(@Reference(name = "metaStore") MetaStore store, Config config) {
    this.store = Objects.requireNonNull(store, "store");
    this.fsName = required("fsName", config.fsName());
    this.nodeName = required("nodeName", config.nodeName());
  }

  @Override
  public String backend() {
    return BACKEND_NAME;
  }

  @Override
  public List<Extent> allocate(long blocks, long goal) {
    throw new UnsupportedOperationException(NOT_YET);
  }

  @Override
  public List<Op> commitOps(long ino, List<Extent> referenced, List<Extent> released) {
    throw new UnsupportedOperationException(NOT_YET);
  }

  @Override
  public void committed(List<Extent> referenced, List<Extent> released) {
    throw new UnsupportedOperationException(NOT_YET);
  }

  @Override
  public void abandon(List<Extent> extents) {
    throw new UnsupportedOperationException(NOT_YET);
  }

  @Override
  public long freeBlocks() {
    throw new UnsupportedOperationException(NOT_YET);
  }

  @Override
  public long totalBlocks() {
    throw new UnsupportedOperationException(NOT_YET);
  }

  @Override
  public String toString() {
    return "arena allocator of " + fsName + " for " + nodeName + " on " + store.describe();
  }

  private static String required(String name, String value) {
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException(PID + ": " + name + " is not set");
    }
    return value;
  }
}

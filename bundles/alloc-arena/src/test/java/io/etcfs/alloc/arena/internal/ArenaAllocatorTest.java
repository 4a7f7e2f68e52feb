package io.etcfs.alloc.arena.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.etcfs.spi.alloc.Extent;
import io.etcfs.spi.meta.MetaStore;
import java.lang.annotation.Annotation;
import java.lang.reflect.Proxy;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;

@Timeout(10)
class ArenaAllocatorTest {

  @Test
  void namesItsBackend() {
    assertEquals("arena", allocator("fs1", "n1").backend());
  }

  @Test
  void everyAllocationCallNamesTheIssueThatBuildsIt() {
    ArenaAllocator arena = allocator("fs1", "n1");
    assertNotYet(() -> arena.allocate(8, -1));
    assertNotYet(() -> arena.commitOps(2, List.of(new Extent(0, 1)), List.of()));
    assertNotYet(() -> arena.committed(List.of(new Extent(0, 1)), List.of()));
    assertNotYet(() -> arena.abandon(List.of(new Extent(0, 1))));
    assertNotYet(arena::freeBlocks);
    assertNotYet(arena::totalBlocks);
  }

  @Test
  void refusesAMissingFsName() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> allocator("", "n1"));
    assertEquals("io.etcfs.alloc.arena: fsName is not set", e.getMessage());
  }

  private static void assertNotYet(Executable call) {
    UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class, call);
    assertEquals(
        "block allocation from arenas is built in issue #3 (alloc-arena)", e.getMessage());
  }

  private static ArenaAllocator allocator(String fs, String node) {
    MetaStore unused =
        (MetaStore)
            Proxy.newProxyInstance(
                MetaStore.class.getClassLoader(),
                new Class<?>[] {MetaStore.class},
                (proxy, method, args) -> {
                  throw new AssertionError("the store is not used at this stage: " + method);
                });
    return new ArenaAllocator(unused, config(fs, node));
  }

  @SuppressWarnings("all")
  private static ArenaAllocator.Config config(String fs, String node) {
    return new ArenaAllocator.Config() {
      @Override
      public Class<? extends Annotation> annotationType() {
        return ArenaAllocator.Config.class;
      }

      @Override
      public String fsName() {
        return fs;
      }

      @Override
      public String nodeName() {
        return node;
      }
    };
  }
}

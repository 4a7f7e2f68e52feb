package io.etcfs.launcher.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.etcfs.launcher.UserError;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(10)
class BackendsTest {
  @TempDir Path bundles;

  @Test
  void aBackendWhoseBundleIsMissingIsNotInstalled() throws Exception {
    UserError e = assertThrows(UserError.class, () -> Backends.alloc("arena", bundles));
    assertEquals("allocator 'arena' is not installed: " + bundles.resolve("alloc-arena.jar")
        + " is missing", e.getMessage());
    Files.createFile(bundles.resolve("alloc-arena.jar"));
    assertEquals("arena", Backends.alloc("arena", bundles));
  }

  @Test
  void bothLockBackendsAreKnownAndAnUnknownOneIsNamed() throws Exception {
    Files.createFile(bundles.resolve("lock-etcd.jar"));
    Files.createFile(bundles.resolve("lock-hazelcast.jar"));
    assertEquals("etcd", Backends.lock("etcd", bundles));
    assertEquals("unknown lock backend 'raft' (etcd or hazelcast)",
        assertThrows(UserError.class, () -> Backends.lock("raft", bundles)).getMessage());
    assertEquals("hazelcast", Backends.lock("hazelcast", bundles));
  }
}

package io.etcfs.lock.hazelcast.internal;

import io.etcfs.testing.ComponentConfigs;
import java.util.Map;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.core.HazelcastInstance;
import io.etcfs.spi.lock.LockMode;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;

@Timeout(60)
class HazelcastLockServiceTest {

  @Test
  void splitsTheMemberList() {
    assertEquals(
        List.of("10.0.0.1:5701", "10.0.0.2:5702", "h3"),
        HazelcastLockService.members(" 10.0.0.1:5701,10.0.0.2:5702 ,, h3"));
    assertThrows(IllegalArgumentException.class, () -> HazelcastLockService.members(" , "));
  }

  @Test
  void configuresOneClusterPerFilesystemJoinedOverTcpIpOnly() {
    Config config = HazelcastMember.config("fs1", "n1", List.of("a:5701", "b:5702"), 5702);
    JoinConfig join = config.getNetworkConfig().getJoin();
    assertEquals("etcfs-fs1", config.getClusterName());
    assertEquals(5702, config.getNetworkConfig().getPort());
    assertFalse(config.getNetworkConfig().isPortAutoIncrement());
    assertFalse(join.getMulticastConfig().isEnabled());
    assertTrue(join.getTcpIpConfig().isEnabled());
    assertEquals(List.of("a:5701", "b:5702"), join.getTcpIpConfig().getMembers());
  }

  @Test
  void refusesABadPortBeforeStartingAnything() {
    assertThrows(
        IllegalArgumentException.class,
        () -> new HazelcastLockService(config("fs1", "n1", "127.0.0.1", 0)));
  }

  @Test
  void startsAMemberInTheBackgroundAndStopsItOnDeactivate() throws Exception {
    int port = freePort();
    HazelcastLockService locks =
        new HazelcastLockService(config("fs1", "n1", "127.0.0.1:" + port, port));
    HazelcastInstance instance =
        locks.member().started().toCompletableFuture().get(45, TimeUnit.SECONDS);
    assertEquals("etcfs-fs1", instance.getConfig().getClusterName());
    assertEquals(1, instance.getCluster().getMembers().size());
    assertEquals("hazelcast", locks.backend());
    assertNotYet(locks::session);
    assertNotYet(() -> locks.acquire(1, LockMode.EXCLUSIVE, Duration.ofSeconds(1)));
    assertNotYet(() -> locks.release(null));
    assertNotYet(() -> locks.createGrant(1));
    locks.deactivate();
    assertFalse(instance.getLifecycleService().isRunning());
  }

  private static void assertNotYet(Executable call) {
    UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class, call);
    assertEquals(
        "inode locks on Hazelcast are built in the backend-swap issue (lock-hazelcast)",
        e.getMessage());
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }

  private static HazelcastLockService.Config config(
      String fs, String node, String members, int port) {
    return ComponentConfigs.of(HazelcastLockService.Config.class,
        Map.of("fsName", fs, "nodeName", node, "members", members, "port", port));
  }
}

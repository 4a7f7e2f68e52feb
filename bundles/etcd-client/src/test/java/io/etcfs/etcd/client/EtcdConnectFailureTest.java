package io.etcfs.etcd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.etcd.local.EtcdProcess;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.MetaStoreException;
import io.etcfs.spi.meta.MetaStoreException.Kind;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Connection failures: unreachable endpoints and refused credentials. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EtcdConnectFailureTest {
  @TempDir static Path dataDir;
  private static EtcdProcess etcd;

  @BeforeAll
  static void startEtcdWithAuth() throws Exception {
    etcd = EtcdProcess.start(dataDir, 1);
    etcdctl("user", "add", "root:pw");
    etcdctl("auth", "enable");
  }

  @AfterAll
  static void stopEtcd() {
    if (etcd != null) {
      etcd.stop();
    }
  }

  private static void etcdctl(String... args) throws Exception {
    List<String> command = new ArrayList<>(
        List.of("etcdctl", "--endpoints", etcd.endpoints()));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    assertTrue(p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0, "etcdctl failed: " + out);
  }

  @Test
  void unreachableEndpointFailsQuicklyWithOneLine() throws IOException {
    String endpoint = "http://127.0.0.1:" + unusedPort();
    EtcdSettings settings =
        EtcdSettings.of(endpoint).withRequestTimeout(Duration.ofSeconds(3));
    long start = System.nanoTime();
    MetaStoreException e =
        assertThrows(MetaStoreException.class, () -> EtcdMetaStore.connect(settings));
    long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    assertEquals(Kind.UNAVAILABLE, e.kind(), e.getMessage());
    assertEquals("etcd at " + endpoint + " is not reachable: connection refused", e.getMessage());
    assertTrue(millis < 3000 + 2000, "took " + millis + " ms");
  }

  @Test
  void wrongPasswordIsUnauthenticated() {
    EtcdSettings settings =
        EtcdSettings.of(etcd.endpoints()).withCredentials("root", "wrong");
    MetaStoreException e =
        assertThrows(MetaStoreException.class, () -> EtcdMetaStore.connect(settings));
    assertEquals(Kind.UNAUTHENTICATED, e.kind(), e.getMessage());
    assertEquals("etcd at " + etcd.endpoints() + " refused the credentials for user 'root'",
        e.getMessage());
  }

  @Test
  void missingCredentialsAreUnauthenticated() {
    MetaStoreException e = assertThrows(MetaStoreException.class,
        () -> EtcdMetaStore.connect(EtcdSettings.of(etcd.endpoints())));
    assertEquals(Kind.UNAUTHENTICATED, e.kind(), e.getMessage());
    assertFalse(e.getMessage().contains("\n"));
  }

  @Test
  void rightPasswordWorks() {
    EtcdSettings settings = EtcdSettings.of(etcd.endpoints()).withCredentials("root", "pw");
    try (EtcdMetaStore store = EtcdMetaStore.connect(settings)) {
      assertTrue(store.get(Keys.of("/x")).isEmpty());
    }
  }

  private static int unusedPort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }
}

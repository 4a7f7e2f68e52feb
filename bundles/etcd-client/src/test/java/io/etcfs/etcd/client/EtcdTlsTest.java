package io.etcfs.etcd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.etcd.local.EtcdProcess;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.MetaStoreException;
import io.etcfs.spi.meta.MetaStoreException.Kind;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.Txn;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** etcd with TLS and client-certificate authentication, certificates made with openssl. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EtcdTlsTest {
  @TempDir static Path dir;
  private static Process etcd;
  private static String endpoint;

  @BeforeAll
  static void startTlsEtcd() throws Exception {
    makeCa("ca");
    makeCa("otherca");
    makeCert("server", "ca", "subjectAltName=IP:127.0.0.1");
    makeCert("client", "ca", "extendedKeyUsage=clientAuth");
    openssl("pkey", "-in", "client.key", "-traditional", "-out", "client-pkcs1.key");
    int clientPort = freePort();
    endpoint = "https://127.0.0.1:" + clientPort;
    etcd = new ProcessBuilder(EtcdProcess.binary().toString(), "--name", "tls",
        "--data-dir", dir.resolve("data").toString(),
        "--listen-client-urls", endpoint, "--advertise-client-urls", endpoint,
        "--listen-peer-urls", "http://127.0.0.1:" + freePort(),
        "--cert-file", dir.resolve("server.crt").toString(),
        "--key-file", dir.resolve("server.key").toString(),
        "--trusted-ca-file", dir.resolve("ca.crt").toString(), "--client-cert-auth")
        .redirectErrorStream(true)
        .redirectOutput(dir.resolve("etcd.log").toFile())
        .start();
    awaitReady();
  }

  @AfterAll
  static void stopEtcd() throws InterruptedException {
    if (etcd != null) {
      etcd.destroy();
      if (!etcd.waitFor(10, TimeUnit.SECONDS)) {
        etcd.destroyForcibly();
      }
    }
  }

  private static EtcdSettings settings(String ca, String cert, String key) {
    return EtcdSettings.of(endpoint).withTls(dir.resolve(ca),
        cert == null ? null : dir.resolve(cert), key == null ? null : dir.resolve(key));
  }

  @Test
  void clientCertificateConnects() {
    try (EtcdMetaStore store =
        EtcdMetaStore.connect(settings("ca.crt", "client.crt", "client.key"))) {
      store.commit(new Txn().then(Op.put(Keys.of("/tls"), Keys.of("ok"))));
      assertEquals("ok", store.get(Keys.of("/tls")).orElseThrow().valueString());
    }
  }

  @Test
  void anUnknownServerCaIsRefusedInOneLine() {
    MetaStoreException e = assertThrows(MetaStoreException.class,
        () -> EtcdMetaStore.connect(settings("otherca.crt", "client.crt", "client.key")));
    assertEquals(Kind.UNAUTHENTICATED, e.kind(), e.getMessage());
    assertTrue(e.getMessage().startsWith("etcd at " + endpoint + " failed the TLS handshake"),
        e.getMessage());
    assertFalse(e.getMessage().contains("\n"), e.getMessage());
  }

  @Test
  void aMissingClientCertificateIsRefused() {
    MetaStoreException e = assertThrows(MetaStoreException.class,
        () -> EtcdMetaStore.connect(settings("ca.crt", null, null)));
    assertEquals(Kind.UNAUTHENTICATED, e.kind(), e.getMessage());
    assertFalse(e.getMessage().contains("\n"), e.getMessage());
  }

  @Test
  void aPkcs1KeyIsExplained() {
    MetaStoreException e = assertThrows(MetaStoreException.class,
        () -> EtcdMetaStore.connect(settings("ca.crt", "client.crt", "client-pkcs1.key")));
    assertTrue(e.getMessage().contains("PKCS#8"), e.getMessage());
  }

  private static void awaitReady() throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (true) {
      try (EtcdMetaStore store =
          EtcdMetaStore.connect(settings("ca.crt", "client.crt", "client.key"))) {
        return;
      } catch (MetaStoreException e) {
        if (System.nanoTime() > deadline || !etcd.isAlive()) {
          throw new IllegalStateException("TLS etcd did not start: " + e.getMessage());
        }
        Thread.sleep(100);
      }
    }
  }

  private static void makeCa(String name) throws Exception {
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
        "-nodes", "-days", "2", "-subj", "/CN=" + name, "-keyout", name + ".key",
        "-out", name + ".crt");
  }

  private static void makeCert(String name, String ca, String extension) throws Exception {
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=" + name,
        "-keyout", name + ".key", "-out", name + ".csr");
    Files.writeString(dir.resolve(name + ".ext"), extension + "\n");
    openssl("x509", "-req", "-in", name + ".csr", "-CA", ca + ".crt", "-CAkey", ca + ".key",
        "-CAcreateserial", "-days", "2", "-extfile", name + ".ext", "-out", name + ".crt");
  }

  private static void openssl(String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of("openssl"));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
        .start();
    String out = new String(p.getInputStream().readAllBytes());
    if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new IllegalStateException("openssl " + String.join(" ", args) + " failed: " + out);
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }
}

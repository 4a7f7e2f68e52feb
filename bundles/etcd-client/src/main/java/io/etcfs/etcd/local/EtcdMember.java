package io.etcfs.etcd.local;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** One etcd process of an {@link EtcdProcess} cluster: fixed name, ports and data directory. */
final class EtcdMember {
  private static final Duration STOP_GRACE = Duration.ofSeconds(10);

  private final String name;
  private final String clientUrl;
  private final String peerUrl;
  private final Path dataDir;
  private final Path log;
  private final Path pidFile;
  private volatile Process process;

  EtcdMember(Path clusterDir, int index, int clientPort, int peerPort) {
    this.name = "etcd" + index;
    this.clientUrl = "http://127.0.0.1:" + clientPort;
    this.peerUrl = "http://127.0.0.1:" + peerPort;
    this.dataDir = clusterDir.resolve(name + ".data");
    this.log = clusterDir.resolve(name + ".log");
    this.pidFile = clusterDir.resolve(name + ".pid");
  }

  String name() {
    return name;
  }

  String clientUrl() {
    return clientUrl;
  }

  String peer() {
    return name + "=" + peerUrl;
  }

  /** Starts the process; a restart reuses the data directory, so etcd ignores the cluster flags. */
  synchronized void start(Path binary, String initialCluster, String token) {
    if (isAlive()) {
      return;
    }
    List<String> command = new ArrayList<>(List.of(binary.toString(),
        "--name", name,
        "--data-dir", dataDir.toString(),
        "--listen-client-urls", clientUrl,
        "--advertise-client-urls", clientUrl,
        "--listen-peer-urls", peerUrl,
        "--initial-advertise-peer-urls", peerUrl,
        "--initial-cluster", initialCluster,
        "--initial-cluster-token", token,
        "--initial-cluster-state", "new",
        "--logger", "zap",
        "--log-outputs", "stderr"));
    ProcessBuilder builder = new ProcessBuilder(command)
        .redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    // ETCD_* variables of the caller's environment would configure this private etcd too
    builder.environment().keySet().removeIf(k -> k.startsWith("ETCD_"));
    try {
      process = builder.start();
      Files.writeString(pidFile, process.pid() + "\n");
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + binary + " for member " + name, e);
    }
  }

  boolean isAlive() {
    Process p = process;
    return p != null && p.isAlive();
  }

  long pid() {
    Process p = process;
    return p == null ? -1 : p.pid();
  }

  Integer exitCode() {
    Process p = process;
    return p == null || p.isAlive() ? null : p.exitValue();
  }

  /** SIGTERM without waiting, so that a whole cluster shuts down in parallel. */
  void signalStop() {
    Process p = process;
    if (p != null && p.isAlive()) {
      p.destroy();
    }
  }

  /** SIGTERM, then SIGKILL if the process is still there after the grace period. */
  synchronized void stop() {
    Process p = process;
    if (p == null) {
      return;
    }
    try {
      p.destroy();
      if (!p.waitFor(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
        p.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
    } finally {
      process = null;
      deletePidFile();
    }
  }

  void kill() {
    Process p = process;
    if (p != null) {
      p.destroyForcibly();
    }
  }

  /** What a member's {@code /health} endpoint says. */
  enum Health {
    NO_ANSWER,
    UNHEALTHY,
    HEALTHY
  }

  Health health(HttpClient http) {
    HttpRequest request = HttpRequest.newBuilder(URI.create(clientUrl + "/health"))
        .timeout(Duration.ofSeconds(1))
        .GET()
        .build();
    try {
      String body = http.send(request, HttpResponse.BodyHandlers.ofString()).body();
      return body.replace(" ", "").contains("\"health\":\"true\"")
          ? Health.HEALTHY
          : Health.UNHEALTHY;
    } catch (IOException e) {
      return Health.NO_ANSWER;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Health.NO_ANSWER;
    }
  }

  boolean lostPortRace() {
    return logTail(50).contains("address already in use");
  }

  /** The last lines of the member's log, for error messages. */
  String logTail(int lines) {
    try {
      List<String> all = Files.readAllLines(log, StandardCharsets.UTF_8);
      return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    } catch (IOException e) {
      return "(no log at " + log + ")";
    }
  }

  void deleteDataDir() {
    EtcdProcess.deleteTree(dataDir);
  }

  private void deletePidFile() {
    try {
      Files.deleteIfExists(pidFile);
    } catch (IOException e) {
      // a stale pid file names a dead process; nothing depends on its removal
    }
  }
}

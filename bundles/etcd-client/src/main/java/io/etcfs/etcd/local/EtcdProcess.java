package io.etcfs.etcd.local;

import io.etcfs.etcd.local.EtcdMember.Health;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A private etcd cluster of 1 or more members on free loopback ports, started from the {@code
 * etcd} binary on PATH, for local clusters and tests. Member {@code i} is named {@code etcd<i>},
 * keeps its data in {@code dataDir/etcd<i>.data}, logs to {@code dataDir/etcd<i>.log} and writes
 * its pid to {@code dataDir/etcd<i>.pid}. A JVM shutdown hook kills members left running.
 */
public final class EtcdProcess implements AutoCloseable {
  private static final Duration READY_TIMEOUT = Duration.ofSeconds(20);
  private static final int PORT_ATTEMPTS = 5;

  private final Path binary;
  private final List<EtcdMember> members;
  private final String initialCluster;
  private final String token;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
  private final Thread shutdownHook = new Thread(this::killAll, "etcd-process-cleanup");
  private boolean stopped;

  private EtcdProcess(Path binary, List<EtcdMember> members) {
    this.binary = binary;
    this.members = List.copyOf(members);
    this.initialCluster =
        members.stream().map(EtcdMember::peer).collect(Collectors.joining(","));
    this.token = "etcfs-" + UUID.randomUUID();
  }

  /**
   * Starts {@code members} etcd processes as one new cluster and waits until every member
   * reports itself healthy.
   *
   * @throws IllegalStateException if etcd is not on PATH, or does not become healthy within 20 s
   *     (the message includes the end of the etcd log)
   */
  public static EtcdProcess start(Path dataDir, int members) {
    if (members < 1) {
      throw new IllegalArgumentException("an etcd cluster needs at least 1 member, not " + members);
    }
    Path binary = binary();
    createDirectories(dataDir);
    for (int attempt = 1; ; attempt++) {
      List<Integer> ports = freePorts(2 * members);
      List<EtcdMember> list = new ArrayList<>();
      for (int i = 0; i < members; i++) {
        list.add(new EtcdMember(dataDir, i, ports.get(2 * i), ports.get(2 * i + 1)));
      }
      EtcdProcess cluster = new EtcdProcess(binary, list);
      try {
        cluster.startAll();
        return cluster;
      } catch (RuntimeException e) {
        cluster.stop();
        if (!(e instanceof PortRaceException)) {
          throw e;
        }
        list.forEach(EtcdMember::deleteDataDir);
        if (attempt == PORT_ATTEMPTS) {
          throw new IllegalStateException(
              "etcd could not bind free ports after " + attempt + " attempts: " + e.getMessage());
        }
      }
    }
  }

  /** The {@code etcd} binary on PATH. */
  public static Path binary() {
    String path = System.getenv("PATH");
    return Stream.of((path == null ? "" : path).split(File.pathSeparator))
        .filter(dir -> !dir.isEmpty())
        .map(dir -> Path.of(dir, "etcd"))
        .filter(Files::isExecutable)
        .findFirst()
        .orElseThrow(() -> new IllegalStateException(
            "etcd not found on PATH: install the etcd-server package (./run does this)"));
  }

  /** The client URLs, comma separated. */
  public String endpoints() {
    return String.join(",", clientUrls());
  }

  public List<String> clientUrls() {
    return members.stream().map(EtcdMember::clientUrl).toList();
  }

  /** The pids of the members that are running now. */
  public List<Long> pids() {
    return members.stream().filter(EtcdMember::isAlive).map(EtcdMember::pid).toList();
  }

  public int size() {
    return members.size();
  }

  /** Stops member {@code i} (SIGTERM, SIGKILL after 10 s); its data directory is kept. */
  public void stopMember(int i) {
    members.get(i).stop();
  }

  /**
   * Restarts member {@code i} with its data directory and ports, and waits until it answers on its
   * client URL. Whether it is healthy depends on the rest of the cluster: see {@link
   * #awaitHealthy()}.
   */
  public synchronized void startMember(int i) {
    EtcdMember member = members.get(i);
    member.start(binary, initialCluster, token);
    await(List.of(member), h -> h != Health.NO_ANSWER);
  }

  /** Waits until every running member reports itself healthy (the cluster has a leader). */
  public void awaitHealthy() {
    await(members.stream().filter(EtcdMember::isAlive).toList(), h -> h == Health.HEALTHY);
  }

  /** Stops every member: SIGTERM to all, then SIGKILL to those alive after 10 s. Idempotent. */
  public synchronized void stop() {
    if (stopped) {
      return;
    }
    stopped = true;
    members.forEach(EtcdMember::signalStop);
    members.forEach(EtcdMember::stop);
    removeShutdownHook();
  }

  @Override
  public void close() {
    stop();
  }

  /**
   * Lets the members outlive this JVM: {@code etcfs up} starts the etcd of a local cluster and
   * exits, and {@code etcfs down} stops it later through the pid files.
   */
  public synchronized void detach() {
    removeShutdownHook();
  }

  private synchronized void startAll() {
    Runtime.getRuntime().addShutdownHook(shutdownHook);
    members.forEach(m -> m.start(binary, initialCluster, token));
    await(members, h -> h == Health.HEALTHY);
  }

  private void await(List<EtcdMember> which, Predicate<Health> ready) {
    long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
    while (true) {
      for (EtcdMember member : which) {
        checkRunning(member);
      }
      if (which.stream().allMatch(m -> ready.test(m.health(http)))) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("etcd (" + endpoints() + ") did not become ready within "
            + READY_TIMEOUT.toSeconds() + " s; last log lines of " + which.get(0).name() + ":\n"
            + which.get(0).logTail(20));
      }
      pause();
    }
  }

  private static void checkRunning(EtcdMember member) {
    Integer exit = member.exitCode();
    if (exit == null) {
      return;
    }
    if (member.lostPortRace()) {
      throw new PortRaceException(member.name() + " at " + member.clientUrl());
    }
    throw new IllegalStateException("etcd member " + member.name() + " exited with code " + exit
        + "; last log lines:\n" + member.logTail(20));
  }

  private static void pause() {
    try {
      Thread.sleep(50);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for etcd", e);
    }
  }

  private void killAll() {
    members.forEach(EtcdMember::kill);
  }

  private void removeShutdownHook() {
    try {
      Runtime.getRuntime().removeShutdownHook(shutdownHook);
    } catch (IllegalStateException | IllegalArgumentException e) {
      // the JVM is already shutting down (the hook itself is running), or it was never added
    }
  }

  /** Free loopback ports; another process may still take one before etcd binds it (see start). */
  private static List<Integer> freePorts(int count) {
    Set<Integer> ports = new LinkedHashSet<>();
    while (ports.size() < count) {
      try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
        ports.add(socket.getLocalPort());
      } catch (IOException e) {
        throw new UncheckedIOException("cannot find a free loopback port", e);
      }
    }
    return List.copyOf(ports);
  }

  private static void createDirectories(Path dir) {
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create the etcd data directory " + dir, e);
    }
  }

  /** Deletes a directory tree; a missing tree is fine. */
  static void deleteTree(Path root) {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(root)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot delete " + root, e);
    }
  }

  /** An etcd member exited because another process took its port first. */
  private static final class PortRaceException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    PortRaceException(String member) {
      super(member + ": address already in use");
    }
  }
}

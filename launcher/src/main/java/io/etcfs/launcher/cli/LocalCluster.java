package io.etcfs.launcher.cli;

import io.etcfs.launcher.UserError;
import io.etcfs.launcher.node.NodeSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/** The layout of a local cluster directory made by {@code etcfs up}. */
final class LocalCluster {
  /** What {@code up --fresh} may remove: only what {@code up} itself creates. */
  private static final List<String> OWNED =
      List.of("etcd", "run", "log", "mnt", "device.img", "cluster.env");

  private LocalCluster() {}

  static Path dir(Path given) {
    if (given != null) {
      return given.toAbsolutePath().normalize();
    }
    String env = System.getenv("ETCFS_CLUSTER_DIR");
    if (env != null && !env.isBlank()) {
      return Path.of(env).toAbsolutePath().normalize();
    }
    return Path.of(System.getProperty("user.home"), ".local", "state", "etcfs", "cluster");
  }

  /** Checks that {@code d} can take a new cluster, clearing a stopped one if {@code fresh}. */
  static void prepare(Path d, boolean fresh) throws IOException {
    NodeLauncher.checkStateDir(d);
    if (Files.exists(ClusterEnv.file(d)) || Files.exists(d.resolve("run"))) {
      if (nodes(d).stream().anyMatch(NodeLauncher::alive) || etcdAlive(d)) {
        throw new UserError("a cluster is already running in " + d + " (etcfs down --dir " + d
            + " first)");
      }
      if (!fresh) {
        throw new UserError(d + " holds a stopped cluster: remove it, or pass --fresh to replace it");
      }
      for (String name : OWNED) {
        deleteTree(d.resolve(name));
      }
    }
    for (String sub : List.of("run", "log", "mnt")) {
      Files.createDirectories(d.resolve(sub));
    }
  }

  /** The specs of the cluster's nodes, from the state dir. */
  static List<NodeSpec> nodes(Path d) throws IOException {
    Path run = d.resolve("run");
    List<NodeSpec> out = new ArrayList<>();
    if (!Files.isDirectory(run)) {
      return out;
    }
    try (Stream<Path> s = Files.list(run)) {
      for (Path p : s.filter(f -> f.toString().endsWith(".properties")).sorted().toList()) {
        out.add(NodeSpec.read(p));
      }
    }
    return out;
  }

  /** The cluster's mountpoints: every directory under DIR/mnt. */
  static List<Path> mountpoints(Path d) throws IOException {
    Path mnt = d.resolve("mnt");
    if (!Files.isDirectory(mnt)) {
      return List.of();
    }
    try (Stream<Path> s = Files.list(mnt)) {
      // isDirectory stats the path: a dead FUSE mount fails it, and must still be listed.
      return s.filter(p -> !Files.isRegularFile(p)).sorted().toList();
    }
  }

  static List<Long> etcdPids(Path d) throws IOException {
    Path etcd = d.resolve("etcd");
    List<Long> pids = new ArrayList<>();
    if (!Files.isDirectory(etcd)) {
      return pids;
    }
    try (Stream<Path> s = Files.list(etcd)) {
      for (Path p : s.filter(f -> f.toString().endsWith(".pid")).toList()) {
        try {
          pids.add(Long.parseLong(Files.readString(p).strip()));
        } catch (NumberFormatException e) {
          // a torn pid file: nothing to stop through it
        }
      }
    }
    return pids;
  }

  private static boolean etcdAlive(Path d) throws IOException {
    return etcdPids(d).stream().flatMap(p -> ProcessHandle.of(p).stream())
        .anyMatch(ProcessHandle::isAlive);
  }

  private static void deleteTree(Path p) throws IOException {
    if (!Files.exists(p)) {
      return;
    }
    try (Stream<Path> s = Files.walk(p)) {
      for (Path f : s.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(f);
      }
    }
  }
}

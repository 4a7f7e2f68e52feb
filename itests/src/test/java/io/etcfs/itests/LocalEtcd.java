package io.etcfs.itests;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/** The private etcd of a local cluster directory. */
final class LocalEtcd {
  private LocalEtcd() {}

  static List<Long> pids(Path clusterDir) throws IOException {
    Path d = clusterDir.resolve("etcd");
    if (!Files.isDirectory(d)) {
      return List.of();
    }
    try (Stream<Path> s = Files.list(d)) {
      return s.filter(p -> p.toString().endsWith(".pid"))
          .flatMap(p -> Processes.pid(p).stream()).toList();
    }
  }
}

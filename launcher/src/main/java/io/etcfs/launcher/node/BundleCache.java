package io.etcfs.launcher.node;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;

/**
 * The Felix bundle cache of one node, reused while the bundles stay the same. Its directory is
 * named after a fingerprint of the bundle directory (every jar's name, size and modification
 * time), so a rebuilt or upgraded tarball never runs a stale cached copy: any other cache of the
 * node is deleted first.
 */
final class BundleCache {
  private BundleCache() {}

  /** Returns the cache directory to use under {@code root} for the bundles in {@code bundles}. */
  static Path prepare(Path root, Path bundles) throws IOException {
    Path cache = root.resolve(fingerprint(bundles));
    Files.createDirectories(root);
    try (Stream<Path> old = Files.list(root)) {
      Path config = cache.resolveSibling(cache.getFileName() + ".config");
      for (Path p : old.filter(p -> !p.equals(cache) && !p.equals(config)).toList()) {
        deleteTree(p);
      }
    }
    Files.createDirectories(cache);
    return cache;
  }

  /** An empty directory for Configuration Admin's files, beside the bundle cache. */
  static Path freshConfigDir(Path cache) throws IOException {
    Path dir = cache.resolveSibling(cache.getFileName() + ".config");
    if (Files.exists(dir)) {
      deleteTree(dir);
    }
    return Files.createDirectories(dir);
  }

  static String fingerprint(Path bundles) throws IOException {
    MessageDigest sha;
    try {
      sha = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
    List<Path> jars;
    try (Stream<Path> s = Files.list(bundles)) {
      jars = s.filter(p -> p.toString().endsWith(".jar")).sorted().toList();
    }
    for (Path jar : jars) {
      String line = jar.getFileName() + " " + Files.size(jar) + " "
          + Files.getLastModifiedTime(jar).toMillis() + "\n";
      sha.update(line.getBytes(StandardCharsets.UTF_8));
    }
    // "c-": bundles are started transiently since the start order became NodeRuntime's; a "b-"
    // cache holds them marked started, and the framework would start them in its own order.
    return "c-" + HexFormat.of().formatHex(sha.digest(), 0, 8);
  }

  private static void deleteTree(Path p) throws IOException {
    try (Stream<Path> all = Files.walk(p)) {
      for (Path q : all.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(q);
      }
    }
  }
}

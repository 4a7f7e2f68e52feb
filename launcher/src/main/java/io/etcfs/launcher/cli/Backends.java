package io.etcfs.launcher.cli;

import io.etcfs.launcher.UserError;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

/**
 * The lock and allocator backends this tarball knows, by the name the filesystem record and
 * {@code --lock}/{@code --alloc} use, and the bundle that provides each. A name is checked before
 * anything is written or started: unknown, not installed (its bundle missing from {@code
 * bundle/}) — each refused with one line.
 */
final class Backends {
  static final String DEFAULT_LOCK = "etcd";
  static final String DEFAULT_ALLOC = "arena";

  private static final Map<String, String> LOCKS =
      new TreeMap<>(Map.of("etcd", "lock-etcd", "hazelcast", "lock-hazelcast"));
  private static final Map<String, String> ALLOCATORS =
      new TreeMap<>(Map.of("arena", "alloc-arena", "shared", "alloc-shared"));

  private Backends() {}

  /** {@code name} as a lock backend a filesystem may be formatted or mounted with. */
  static String lock(String name, Path bundleDir) {
    return check("lock backend", name, LOCKS, bundleDir);
  }

  /** {@code name} as an allocator a filesystem may be formatted with. */
  static String alloc(String name, Path bundleDir) {
    return check("allocator", name, ALLOCATORS, bundleDir);
  }

  /** The lock backends whose bundle is in {@code bundleDir}, by name. */
  static java.util.List<String> installedLocks(Path bundleDir) {
    return installed(LOCKS, bundleDir);
  }

  /** The allocators whose bundle is in {@code bundleDir}, by name. */
  static java.util.List<String> installedAllocators(Path bundleDir) {
    return installed(ALLOCATORS, bundleDir);
  }

  private static java.util.List<String> installed(Map<String, String> known, Path bundleDir) {
    return known.entrySet().stream()
        .filter(e -> Files.isRegularFile(bundleDir.resolve(e.getValue() + ".jar")))
        .map(Map.Entry::getKey).toList();
  }

  private static String check(String what, String name, Map<String, String> known,
      Path bundleDir) {
    String bundle = known.get(name);
    if (bundle == null) {
      throw new UserError("unknown " + what + " '" + name + "' (" + String.join(" or ",
          known.keySet()) + ")");
    }
    Path jar = bundleDir.resolve(bundle + ".jar");
    if (!Files.isRegularFile(jar)) {
      throw new UserError(what + " '" + name + "' is not installed: " + jar + " is missing");
    }
    return name;
  }
}

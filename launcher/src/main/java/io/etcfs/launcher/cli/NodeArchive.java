package io.etcfs.launcher.cli;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;

/**
 * The node JVM's class-data-sharing archive: the classes a node loads while it starts — the
 * Felix framework and the launcher from the class path, and the bundles' classes (jetcd, gRPC,
 * Netty, vert.x, jnr-fuse, SCR...) from their own loaders — stored parsed and verified, so a node
 * maps them instead of loading them. Java 17 has no {@code -XX:+AutoCreateSharedArchive}
 * (JDK 19), so this does by hand what that flag does:
 *
 * <ul>
 *   <li>one archive per installation, Java and node JVM options: {@code node-KEY.jsa} in
 *       {@code <etcfs home>/cds}, or {@code <runtime dir>/cds} where the home is not writable;
 *   <li>while there is none, every node started runs with
 *       {@code -XX:ArchiveClassesAtExit=node-KEY.ID.jsa.part} and a claim beside it
 *       ({@code node-KEY.ID.dumping}: its pid, and {@code ready} once it was ready): the JVM
 *       writes the archive when that node exits, which adds a second or so to its {@code umount}
 *       (once: any node of the installation may be the one, so a first node that runs for months
 *       does not keep the others from it);
 *   <li>the next start finds the dumping node gone and renames a complete {@code .part} of a
 *       node that had been ready to {@code node-KEY.jsa} (the JVM writes the archive's header
 *       last, so a file without the header's magic is incomplete; a node that failed its start
 *       archived only part of what a start loads): from then on every node starts with
 *       {@code -XX:SharedArchiveFile}. Other parts are deleted.
 * </ul>
 *
 * <p>Nothing here may fail a start: any error means a start without the archive. A JVM that
 * refuses the archive (it does not match this Java or class path) says so in one line of the
 * node's log ({@code Unable to use shared archive}) and starts without it. Options in
 * {@code ETCFS_NODE_JAVA_OPTS} that choose sharing themselves ({@code -Xshare},
 * {@code SharedArchiveFile}, {@code ArchiveClassesAtExit}) turn this off.
 */
final class NodeArchive {
  /** The JVM's magic number at the start of a dynamic archive's header (little or big endian). */
  private static final int DYNAMIC_MAGIC = 0xf00baba8;
  /** A claim with no pid yet older than this was left by a CLI that died before its spawn. */
  private static final Duration UNSTARTED_CLAIM = Duration.ofMinutes(2);
  /** Archives of other keys (another Java, other bundles) untouched this long are deleted. */
  private static final Duration STALE = Duration.ofDays(7);
  private static final String CLAIM = ".dumping";
  private static final String PART = ".jsa.part";

  /**
   * What to add to one node's command line, and what to tell this class as it starts.
   *
   * @param options the JVM options (empty: start without the archive)
   * @param claim the dump claim of this node, or null
   */
  record Plan(List<String> options, Path claim) {
    static final Plan NONE = new Plan(List.of(), null);

    /** Records which process dumps the archive at its exit. */
    void started(long pid) {
      write(pid + "\n", false);
    }

    /** The node became ready: its dump holds what a whole start loads. */
    void ready() {
      write("ready\n", true);
    }

    /** The node's process could not be started: give the claim up. */
    void abandoned() {
      if (claim != null) {
        try {
          Files.deleteIfExists(claim);
        } catch (IOException e) {
          // ages out
        }
      }
    }

    private void write(String text, boolean append) {
      if (claim == null) {
        return;
      }
      try {
        if (append) {
          Files.writeString(claim, text, java.nio.file.StandardOpenOption.APPEND);
        } else {
          Files.writeString(claim, text);
        }
      } catch (IOException e) {
        // a claim without a pid ages out; one without "ready" is not promoted
      }
    }
  }

  private NodeArchive() {}

  /** The options for a node about to start with class path {@code classPath}. */
  static Plan plan(String classPath, List<String> jvmOptions) {
    if (jvmOptions.stream().anyMatch(o -> o.startsWith("-Xshare")
        || o.contains("SharedArchiveFile") || o.contains("ArchiveClassesAtExit"))) {
      return Plan.NONE;
    }
    try {
      Path dir = directory();
      if (dir == null) {
        return Plan.NONE;
      }
      String name = "node-" + key(classPath, jvmOptions);
      Path archive = dir.resolve(name + ".jsa");
      settle(dir, name + ".");
      if (isArchive(archive)) {
        return new Plan(List.of("-XX:SharedArchiveFile=" + archive), null);
      }
      String id = name + "." + Long.toHexString(ProcessHandle.current().pid()) + "-"
          + Long.toHexString(System.nanoTime() & 0xffffffffL);
      Path claim = Files.createFile(dir.resolve(id + CLAIM));
      // The dump reports every class it cannot store (old class file versions, classes never
      // linked): hundreds of warnings that belong in no node's log.
      return new Plan(List.of("-XX:ArchiveClassesAtExit=" + dir.resolve(id + PART),
          "-Xlog:cds=off", "-Xlog:cds+dynamic=off"), claim);
    } catch (IOException | RuntimeException e) {
      return Plan.NONE;
    }
  }

  /**
   * After nodes have stopped ({@code umount}, {@code down}): finishes their dumps at once, so
   * that no part file waits for the next start to be renamed or deleted.
   */
  static void settle() {
    try {
      Path dir = directory();
      if (dir != null) {
        settle(dir, "node-");
      }
    } catch (IOException | RuntimeException e) {
      // the next start tries again
    }
  }

  /**
   * Finishes the dumps whose claims' names start with {@code prefix} and whose nodes have
   * exited: the first complete one of a node that had been ready is renamed into place as its
   * key's archive, the others deleted, and their claims removed.
   */
  private static void settle(Path dir, String prefix) throws IOException {
    List<Path> claims;
    try (Stream<Path> s = Files.list(dir)) {
      claims = s.filter(p -> {
        String f = p.getFileName().toString();
        return f.startsWith(prefix) && f.endsWith(CLAIM);
      }).toList();
    }
    for (Path claim : claims) {
      String f = claim.getFileName().toString();
      Path part = dir.resolve(f.substring(0, f.length() - CLAIM.length()) + PART);
      Path archive = dir.resolve(f.substring(0, f.indexOf('.')) + ".jsa");
      List<String> lines;
      try {
        lines = Files.readAllLines(claim);
      } catch (java.nio.file.NoSuchFileException e) {
        continue; // settled by another start
      }
      if (lines.isEmpty()) {
        if (Files.getLastModifiedTime(claim).toInstant()
            .isAfter(Instant.now().minus(UNSTARTED_CLAIM))) {
          continue; // its node is being started
        }
      } else if (dumperAlive(lines.get(0).strip(), part)) {
        continue;
      }
      if (lines.contains("ready") && !isArchive(archive) && isArchive(part)) {
        Files.move(part, archive, StandardCopyOption.ATOMIC_MOVE,
            StandardCopyOption.REPLACE_EXISTING);
        pruneOthers(dir, archive);
      } else {
        Files.deleteIfExists(part);
      }
      Files.deleteIfExists(claim);
    }
  }

  /** Whether {@code pid} is still the node that will write {@code part} at its exit. */
  private static boolean dumperAlive(String pid, Path part) {
    Optional<ProcessHandle> p;
    try {
      p = ProcessHandle.of(Long.parseLong(pid)).filter(ProcessHandle::isAlive);
    } catch (NumberFormatException e) {
      return false;
    }
    if (p.isEmpty()) {
      return false;
    }
    // A reused pid is another process: one that does not name the part file is not the dumper.
    return p.get().info().commandLine().map(c -> c.contains(part.toString())).orElse(true);
  }

  private static void pruneOthers(Path dir, Path keep) throws IOException {
    Instant before = Instant.now().minus(STALE);
    try (Stream<Path> s = Files.list(dir)) {
      for (Path p : s.filter(p -> !p.equals(keep) && p.getFileName().toString().endsWith(".jsa"))
          .toList()) {
        if (Files.getLastModifiedTime(p).toInstant().isBefore(before)) {
          Files.deleteIfExists(p);
        }
      }
    }
  }

  /** A file the JVM finished writing: it writes the header, with its magic, last. */
  static boolean isArchive(Path p) {
    if (!Files.isRegularFile(p)) {
      return false;
    }
    try (InputStream in = Files.newInputStream(p)) {
      byte[] b = in.readNBytes(4);
      if (b.length < 4) {
        return false;
      }
      ByteBuffer buf = ByteBuffer.wrap(b);
      return buf.order(ByteOrder.LITTLE_ENDIAN).getInt(0) == DYNAMIC_MAGIC
          || buf.order(ByteOrder.BIG_ENDIAN).getInt(0) == DYNAMIC_MAGIC;
    } catch (IOException e) {
      return false;
    }
  }

  /** {@code <home>/cds} if it can be written, else {@code <runtime dir>/cds}, else null. */
  private static Path directory() {
    for (Path dir : List.of(Home.dir().resolve("cds"), Home.runtimeDir().resolve("cds"))) {
      try {
        Files.createDirectories(dir);
        if (Files.isWritable(dir)) {
          return dir;
        }
      } catch (IOException | SecurityException e) {
        // try the next
      }
    }
    return null;
  }

  /**
   * What the archive depends on: this Java, the node's class path and bundles (each jar's name,
   * size and modification time: the JVM refuses an archive whose class path jars changed, and a
   * changed bundle would leave most of its classes unmatched) and the node JVM's options (the
   * garbage collector, among others, must be the one it was dumped with).
   */
  static String key(String classPath, List<String> jvmOptions) throws IOException {
    StringBuilder s = new StringBuilder();
    s.append(System.getProperty("java.home")).append('\n')
        .append(System.getProperty("java.vm.version")).append('\n')
        .append(String.join(" ", jvmOptions)).append('\n');
    List<Path> jars = new java.util.ArrayList<>();
    for (String e : classPath.split(":")) {
      jars.add(Path.of(e));
    }
    try (Stream<Path> b = Files.list(Home.dir().resolve("bundle"))) {
      jars.addAll(b.filter(p -> p.toString().endsWith(".jar")).sorted().toList());
    }
    for (Path jar : jars) {
      s.append(jar).append(' ').append(Files.size(jar)).append(' ')
          .append(Files.getLastModifiedTime(jar).toMillis()).append('\n');
    }
    // Two CRCs rather than a MessageDigest: this runs before the node is spawned, on the join's
    // critical path, and loading the security providers costs a cold CLI tens of milliseconds.
    byte[] bytes = s.toString().getBytes(StandardCharsets.UTF_8);
    CRC32 a = new CRC32();
    a.update(bytes);
    CRC32C b = new CRC32C();
    b.update(bytes);
    return String.format("%08x%08x", a.getValue(), b.getValue());
  }
}

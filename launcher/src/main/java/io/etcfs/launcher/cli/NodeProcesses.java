package io.etcfs.launcher.cli;

import io.etcfs.launcher.node.NodeSpec;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The node JVMs running on this machine, found from their command lines in /proc: a node is
 * {@code java ... io.etcfs.launcher.node.NodeMain SPEC_FILE}, whoever started it and whichever
 * runtime directory its mount record went to. Only nodes whose spec this user can read are seen
 * (specs are 0600: a user finds their own nodes, root finds all).
 */
final class NodeProcesses {
  static final String MAIN_CLASS = "io.etcfs.launcher.node.NodeMain";

  private NodeProcesses() {}

  /**
   * A running node.
   *
   * @param pid its JVM
   * @param spec its spec, as it started with it
   */
  record Node(long pid, NodeSpec spec) {}

  /** Every running node whose spec names one of {@code mountpoints}. */
  static List<Node> serving(Collection<Path> mountpoints) {
    List<Path> mps = mountpoints.stream().map(p -> p.toAbsolutePath().normalize()).toList();
    return all().stream().filter(n -> mps.contains(n.spec().mountpoint())).toList();
  }

  static List<Node> all() {
    List<Node> out = new ArrayList<>();
    try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
      for (Path p : procs.filter(d -> d.getFileName().toString().matches("[0-9]+")).toList()) {
        long pid = Long.parseLong(p.getFileName().toString());
        specFile(pid).flatMap(NodeProcesses::readSpec)
            .filter(s -> !NodeStopper.zombie(pid))
            .ifPresent(s -> out.add(new Node(pid, s)));
      }
    } catch (IOException e) {
      // No /proc to read: only the nodes known by their records are found.
    }
    return out;
  }

  /** Whether {@code pid} is the node JVM started with {@code spec} (and not a reused pid). */
  static boolean isNode(long pid, NodeSpec spec) {
    return specFile(pid).map(f -> f.equals(spec.specFile().toAbsolutePath().normalize()))
        .orElse(false);
  }

  /** The spec file a node JVM was started with, if {@code pid} is one. */
  private static Optional<Path> specFile(long pid) {
    byte[] raw;
    try {
      raw = Files.readAllBytes(Path.of("/proc/" + pid + "/cmdline"));
    } catch (IOException e) {
      return Optional.empty(); // gone, or not ours to read
    }
    List<String> args = Arrays.asList(new String(raw, StandardCharsets.UTF_8).split("\0"));
    int main = args.indexOf(MAIN_CLASS);
    if (main < 0 || main + 1 >= args.size()) {
      return Optional.empty();
    }
    return Optional.of(Path.of(args.get(main + 1)).toAbsolutePath().normalize());
  }

  private static Optional<NodeSpec> readSpec(Path file) {
    try {
      return Optional.of(NodeSpec.read(file));
    } catch (RuntimeException e) {
      return Optional.empty(); // another user's node, or a spec removed since
    }
  }
}

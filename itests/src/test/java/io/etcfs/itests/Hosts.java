package io.etcfs.itests;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * "Hosts" for a multi-host rehearsal on one machine: each one a network namespace of its own
 * with one address on a shared bridge ({@code 10.203.X.N/24}), so that they reach each other only
 * through the bridge, never through loopback. The bridge has no address in the host's namespace:
 * the test itself reaches a host only by running a command inside it ({@link #in}). Commands run
 * with {@code nsenter --net} (not {@code ip netns exec}, which would also make a new mount
 * namespace: the nodes' FUSE mounts must stay visible to the test).
 */
final class Hosts implements AutoCloseable {
  private final String tag;
  private final int x;
  private final String bridge;
  private final Map<String, Integer> index = new LinkedHashMap<>();
  private boolean bridgeMade;

  private Hosts(String tag, int x) {
    this.tag = tag;
    this.x = x;
    this.bridge = "efb" + tag;
  }

  /** A bridge and one namespace per name, or fails saying why (e.g. not root). */
  static Hosts create(String... names) throws Exception {
    if (!"0".equals(Sh.run("id", "-u").out().strip())) {
      throw new AssertionError("the multi-host rehearsal needs root: each host is a network"
          + " namespace (run the itests as root)");
    }
    String used = Sh.run("ip", "-4", "-o", "addr").out();
    int x;
    do {
      x = ThreadLocalRandom.current().nextInt(1, 255);
    } while (used.contains("10.203." + x + "."));
    String tag = Integer.toString(ThreadLocalRandom.current().nextInt(1 << 20), 36);
    Hosts h = new Hosts(tag, x);
    try {
      h.ip("link", "add", h.bridge, "type", "bridge");
      h.bridgeMade = true;
      h.ip("link", "set", h.bridge, "up");
      for (String name : names) {
        h.add(name);
      }
    } catch (Exception | AssertionError e) {
      h.close();
      throw new AssertionError("cannot create the rehearsal's hosts: " + e.getMessage(), e);
    }
    return h;
  }

  private void add(String name) throws Exception {
    int n = index.size() + 1;
    index.put(name, n);
    String ns = ns(name);
    String hostIf = "e" + tag + n + "h";
    String nsIf = "e" + tag + n + "n";
    ip("netns", "add", ns);
    ip("link", "add", hostIf, "type", "veth", "peer", "name", nsIf);
    ip("link", "set", hostIf, "master", bridge);
    ip("link", "set", hostIf, "up");
    ip("link", "set", nsIf, "netns", ns);
    in(name, "ip", "link", "set", "lo", "up");
    in(name, "ip", "addr", "add", address(name) + "/24", "dev", nsIf);
    in(name, "ip", "link", "set", nsIf, "up");
  }

  /** The host's address on the bridge. */
  String address(String name) {
    Integer n = index.get(name);
    if (n == null) {
      throw new IllegalArgumentException("no host " + name);
    }
    return "10.203." + x + "." + n;
  }

  private String ns(String name) {
    return "etcfs-" + tag + "-" + name;
  }

  /** The prefix that runs a command on host {@code name}. */
  List<String> prefix(String name) {
    address(name); // known
    return List.of("nsenter", "--net=/run/netns/" + ns(name));
  }

  /** Runs {@code cmd} on host {@code name}, failing if it fails. */
  Sh.Out in(String name, String... cmd) throws Exception {
    List<String> full = new ArrayList<>(prefix(name));
    full.addAll(List.of(cmd));
    return Sh.run(full.toArray(new String[0])).ok();
  }

  /** Every host's name. */
  List<String> names() {
    return List.copyOf(index.keySet());
  }

  private static void ip(String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of("ip"));
    cmd.addAll(List.of(args));
    Sh.run(cmd.toArray(new String[0])).ok();
  }

  @Override
  public void close() throws Exception {
    for (Map.Entry<String, Integer> e : index.entrySet()) {
      Sh.run("ip", "link", "del", "e" + tag + e.getValue() + "h"); // takes its peer along
      if (Files.exists(Path.of("/run/netns", ns(e.getKey())))) {
        Sh.Out out = Sh.run("ip", "netns", "del", ns(e.getKey()));
        if (out.exit() != 0) {
          System.err.println("cannot delete network namespace " + ns(e.getKey()) + ": " + out);
        }
      }
    }
    if (bridgeMade) {
      Sh.run("ip", "link", "del", bridge);
    }
  }
}

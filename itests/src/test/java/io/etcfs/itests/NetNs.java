package io.etcfs.itests;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A network namespace joined to the host by a veth pair, {@code 10.201.X.1/30} on the host side
 * and {@code .2} inside, for cutting one node off from etcd while it keeps its disk. Commands run
 * inside with {@code nsenter --net} only (not {@code ip netns exec}, which also makes a new mount
 * namespace: the node's FUSE mount must stay visible to the test). {@link #cut()} takes the host
 * side down: the inside end loses its carrier and drops what it sends, and the host has no route
 * back, so the node's connections hang as in a real partition instead of being refused.
 */
final class NetNs implements AutoCloseable {
  final String name;
  final String hostIf;
  final String nsIf;
  final String hostIp;
  final String nsIp;
  private boolean created;

  private NetNs(int x, String tag) {
    name = "etcfs-" + tag;
    hostIf = "ef" + tag + "h";
    nsIf = "ef" + tag + "n";
    hostIp = "10.201." + x + ".1";
    nsIp = "10.201." + x + ".2";
  }

  /** Creates the namespace and the pair, or fails saying why (e.g. not root). */
  static NetNs create() throws Exception {
    if (!"0".equals(Sh.run("id", "-u").out().strip())) {
      throw new AssertionError("network namespaces need root: this test cuts a node off from etcd"
          + " with one (run the itests as root)");
    }
    String used = Sh.run("ip", "-4", "-o", "addr").out();
    int x;
    do {
      x = ThreadLocalRandom.current().nextInt(1, 255);
    } while (used.contains("10.201." + x + "."));
    String tag = Integer.toString(ThreadLocalRandom.current().nextInt(1 << 20), 36);
    NetNs ns = new NetNs(x, tag);
    try {
      ns.setUp();
    } catch (Exception | AssertionError e) {
      ns.close();
      throw new AssertionError("cannot create network namespace " + ns.name + ": " + e.getMessage(),
          e);
    }
    return ns;
  }

  private void setUp() throws Exception {
    ip("netns", "add", name);
    created = true;
    ip("link", "add", hostIf, "type", "veth", "peer", "name", nsIf);
    ip("link", "set", nsIf, "netns", name);
    ip("addr", "add", hostIp + "/30", "dev", hostIf);
    ip("link", "set", hostIf, "up");
    inside("ip", "link", "set", "lo", "up");
    inside("ip", "addr", "add", nsIp + "/30", "dev", nsIf);
    inside("ip", "link", "set", nsIf, "up");
  }

  /** {@code nsenter --net=/run/netns/NAME} followed by {@code cmd}: the prefix for commands. */
  List<String> prefix() {
    return List.of("nsenter", "--net=/run/netns/" + name);
  }

  Sh.Out inside(String... cmd) throws Exception {
    List<String> full = new ArrayList<>(prefix());
    full.addAll(List.of(cmd));
    return Sh.run(full.toArray(new String[0])).ok();
  }

  /** Cuts the namespace off: packets are dropped, nothing is refused. */
  void cut() throws Exception {
    ip("link", "set", hostIf, "down");
  }

  void heal() throws Exception {
    ip("link", "set", hostIf, "up");
  }

  private static void ip(String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of("ip"));
    cmd.addAll(List.of(args));
    Sh.run(cmd.toArray(new String[0])).ok();
  }

  @Override
  public void close() throws IOException, InterruptedException {
    Sh.run("ip", "link", "del", hostIf); // takes its peer along; absent is fine
    if (created || Files.exists(Path.of("/run/netns", name))) {
      Sh.Out out = Sh.run("ip", "netns", "del", name);
      if (out.exit() != 0) {
        System.err.println("cannot delete network namespace " + name + ": " + out);
      }
    }
  }
}

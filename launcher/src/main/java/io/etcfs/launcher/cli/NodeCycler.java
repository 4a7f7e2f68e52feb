package io.etcfs.launcher.cli;

import io.etcfs.etcd.client.EtcdMetaStore;
import io.etcfs.launcher.node.NodeSpec;
import io.etcfs.spi.fs.Keyspace;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The experiment's node kill: a node's JVM found by the mount it serves (on this machine),
 * killed with SIGKILL, and mounted again from the spec it ran with once its membership has
 * expired — reading its backends from the record, which a switch may have changed since.
 */
final class NodeCycler {
  private final List<Path> mounts;
  private final Map<Integer, NodeSpec> killed = new HashMap<>();

  NodeCycler(List<Path> mounts) {
    this.mounts = mounts;
  }

  void kill(int node) throws Exception {
    Path mp = mounts.get(node);
    List<NodeProcesses.Node> serving = NodeProcesses.serving(List.of(mp));
    if (serving.isEmpty()) {
      throw new IllegalStateException("no node process on this machine serves " + mp);
    }
    NodeProcesses.Node n = serving.get(0);
    ProcessHandle p = ProcessHandle.of(n.pid())
        .orElseThrow(() -> new IllegalStateException("node " + n.pid() + " is gone already"));
    killed.put(node, n.spec());
    p.destroyForcibly();
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (p.isAlive() && !NodeStopper.zombie(p.pid())) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("node " + n.spec().nodeName() + " (pid " + p.pid()
            + ") still alive 30 s after SIGKILL");
      }
      Thread.sleep(5);
    }
  }

  void restart(int node) throws Exception {
    NodeSpec spec = killed.remove(node);
    if (spec == null) {
      throw new IllegalStateException("node" + (node + 1) + " was not killed here");
    }
    NodeStopper.detachIfDead(spec.mountpoint());
    // without the backends: the node reads them from the record, as a switch left it
    NodeSpec again = spec.withLockBackend("").withAllocBackend("");
    try (EtcdMetaStore store = EtcdOptions.connect(spec.etcd())) {
      byte[] member = Keyspace.of(spec.fsName()).bytes(Keyspace.MEMBERS + spec.nodeName());
      long deadline = System.nanoTime() + 120_000_000_000L;
      while (store.get(member).isPresent()) { // its lease has to run out first
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("the membership of " + spec.nodeName()
              + " did not expire within 120 s of its kill");
        }
        Thread.sleep(100);
      }
      Process p = NodeLauncher.spawn(again);
      NodeLauncher.checkWhileStarting(again, p,
          () -> NodeLauncher.checkEtcd(again, store, p.pid()));
      NodeLauncher.awaitReady(again, p);
      MountRegistry.standard().register(again);
    }
  }
}

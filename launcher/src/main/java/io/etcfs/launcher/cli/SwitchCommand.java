package io.etcfs.launcher.cli;

import io.etcfs.etcd.client.EtcdMetaStore;
import io.etcfs.launcher.UserError;
import io.etcfs.spi.fs.Keyspace;
import io.etcfs.support.switches.SwitchRequests;
import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code etcfs switch --lock NAME}: the live switch of a mounted cluster's lock backend (issue
 * #15), asked through etcd as a node's {@code lock switch} asks; the nodes carry it out.
 */
@Command(name = "switch", mixinStandardHelpOptions = true,
    description = {"Switch a mounted cluster to another lock backend, live.",
        "Every node stops taking locks, lets go of what it holds and resumes on the new backend;"
            + " processes see a pause. Prints the pause and how to undo it."})
final class SwitchCommand implements Callable<Integer> {
  static final class Target {
    @Option(names = "--lock", paramLabel = "BACKEND", required = true,
        description = "The lock backend to switch to: etcd or hazelcast.")
    String lock;

    @Option(names = "--alloc", paramLabel = "ALLOCATOR", required = true,
        description = "The allocator to switch to (not built yet: refused).")
    String alloc;
  }

  @ArgGroup(exclusive = true, multiplicity = "1")
  Target target;

  @Mixin EtcdOptions etcd;

  @Option(names = "--dir", paramLabel = "DIR", description = "A local cluster made by 'etcfs up'.")
  Path dir;

  @Option(names = "--name", paramLabel = "FS", description = "Filesystem name (default: etcfs).")
  String name;

  @Override
  public Integer call() throws Exception {
    if (target.alloc != null) {
      throw new UserError("switch --alloc " + target.alloc + ": a live switch of the allocator"
          + " is not built yet; nothing was changed (switch --lock works)");
    }
    EtcdOptions.Filesystem fs = etcd.filesystem(dir, name);
    try (EtcdMetaStore store = EtcdOptions.connect(fs.connection())) {
      SwitchRequests requests = new SwitchRequests(store, Keyspace.of(fs.name()));
      String by = "etcfs switch on " + InetAddress.getLocalHost().getHostName();
      try {
        System.out.println(requests.request(SwitchRequests.LOCK, target.lock,
            Backends.installedLocks(Home.dir().resolve("bundle")), by,
            SwitchRequests.DEADLINE.plus(Duration.ofSeconds(60))));
      } catch (IllegalArgumentException | IllegalStateException e) {
        throw new UserError(e.getMessage());
      }
    }
    return 0;
  }
}

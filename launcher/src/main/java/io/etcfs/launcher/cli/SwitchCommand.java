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
 * {@code etcfs switch --lock NAME | --alloc NAME}: the live switch of a mounted cluster's lock
 * backend or allocator (issue #15), asked through etcd as a node's {@code lock switch} or {@code
 * alloc switch} asks; the nodes carry it out.
 */
@Command(name = "switch", mixinStandardHelpOptions = true,
    description = {"Switch a mounted cluster to another lock backend or allocator, live.",
        "Every node stops taking locks, commits and lets go of what it holds and resumes on the"
            + " new backend; processes see a pause. Prints the pause and how to undo it."})
final class SwitchCommand implements Callable<Integer> {
  static final class Target {
    @Option(names = "--lock", paramLabel = "BACKEND", required = true,
        description = "The lock backend to switch to: etcd or hazelcast.")
    String lock;

    @Option(names = "--alloc", paramLabel = "ALLOCATOR", required = true,
        description = "The allocator to switch to: arena or shared.")
    String alloc;
  }

  /** How long it waits for the outcome: the cluster's deadline, and time to resume. */
  private static final Duration WAIT = SwitchRequests.DEADLINE.plus(Duration.ofSeconds(60));

  @ArgGroup(exclusive = true, multiplicity = "1")
  Target target;

  @Mixin EtcdOptions etcd;

  @Option(names = "--dir", paramLabel = "DIR", description = "A local cluster made by 'etcfs up'.")
  Path dir;

  @Option(names = "--name", paramLabel = "FS", description = "Filesystem name (default: etcfs).")
  String name;

  @Override
  public Integer call() throws Exception {
    Path bundles = Home.dir().resolve("bundle");
    // an unknown or uninstalled name is refused before etcd is asked anything
    if (target.lock != null) {
      Backends.lock(target.lock, bundles);
    } else {
      Backends.alloc(target.alloc, bundles);
    }
    EtcdOptions.Filesystem fs = etcd.filesystem(dir, name);
    try (EtcdMetaStore store = EtcdOptions.connect(fs.connection())) {
      SwitchRequests requests = new SwitchRequests(store, Keyspace.of(fs.name()));
      String by = "etcfs switch on " + InetAddress.getLocalHost().getHostName();
      try {
        System.out.println(target.lock != null
            ? requests.request(SwitchRequests.LOCK, target.lock,
                Backends.installedLocks(bundles), by, WAIT)
            : requests.request(SwitchRequests.ALLOC, target.alloc,
                Backends.installedAllocators(bundles), by, WAIT));
      } catch (IllegalArgumentException | IllegalStateException e) {
        throw new UserError(e.getMessage());
      }
    }
    return 0;
  }
}

package io.etcfs.lock.etcd.internal;

import io.etcfs.spi.lock.LockService;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.shell.Completion;
import io.etcfs.spi.shell.InodePaths;
import io.etcfs.support.shell.Args;
import io.etcfs.support.shell.Table;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.felix.service.command.Descriptor;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;

/**
 * The Gogo command {@code locks}: the inode locks this node holds or awaits, from the etcd lock
 * service's own state, or with {@code --all} every lock key in etcd. A component beside {@link
 * EtcdLockService}, sharing its configuration, so it comes and goes with that backend. The
 * PATH column comes from the core's {@link InodePaths} while it is there: the lock backend runs
 * without the filesystem (a node coming up, a test), so that reference is optional and dynamic.
 */
@Component(
    service = LockCommands.class,
    configurationPid = EtcdLockService.PID,
    configurationPolicy = ConfigurationPolicy.REQUIRE,
    property = {"osgi.command.scope=etcfs", "osgi.command.function=locks",
        Completion.PROPERTY + "=locks --all --json -h"})
public final class LockCommands {
  private static final String USAGE = "locks [--all] [--json]";

  private final MetaStore store;
  private final EtcdLockService locks;
  private final AtomicReference<InodePaths> paths = new AtomicReference<>();

  @Activate
  public LockCommands(
      @Reference(name = "metaStore") MetaStore store,
      @Reference(name = "lockService",
          target = "(" + LockService.BACKEND + "=" + EtcdLockService.BACKEND_NAME + ")")
          LockService lockService) {
    if (!(lockService instanceof EtcdLockService etcd)) {
      throw new IllegalStateException("locks: the lock service registered as backend "
          + EtcdLockService.BACKEND_NAME + " is " + lockService.getClass().getName());
    }
    this.store = store;
    this.locks = etcd;
  }

  @Reference(
      name = "inodePaths",
      cardinality = ReferenceCardinality.OPTIONAL,
      policy = ReferencePolicy.DYNAMIC,
      policyOption = ReferencePolicyOption.GREEDY)
  void bindInodePaths(InodePaths service) {
    paths.set(service);
  }

  /** A replacement is bound before the old one goes, so only clear our own. */
  void unbindInodePaths(InodePaths service) {
    paths.compareAndSet(service, null);
  }

  /** This node's inode locks, or with --all every lock key of the filesystem. */
  @Descriptor("inode locks held or awaited here; --all: every lock key in etcd")
  public String locks(@Descriptor("[--all] [--json] [-h]") String... words) {
    Args a = Args.parse("locks", USAGE, words, 0, 0, "--all", "--json");
    if (a.help()) {
      return a.usage() + "\nInode locks held or awaited on this node (etcd lock backend); "
          + "--all: every\nlock key in etcd, held or queued, with its node and fencing token. "
          + "PATH is the\nname this node last saw the inode under, - where it knows none.";
    }
    Table t = a.has("--all")
        ? LockRows.all(locks.prefix(), store.prefix(Keys.of(locks.prefix()), 0).kvs(),
            this::pathOf)
        : LockRows.local(locks.localLocks(), this::pathOf);
    if (a.has("--json")) {
      return t.json();
    }
    String none = a.has("--all") ? "no inode locks in etcd" : "no inode locks on this node";
    String footer = a.has("--all") ? "" : "\nrecalls served by this node: "
        + locks.recallsServed() + "\netcd round trips: " + locks.roundTrips()
        + "\nTOKEN: fencing token; FOR_S: seconds held or awaited"
        + "\nRECALLS: served per inode, counted for the " + RecallCounts.CAPACITY
        + " inodes recalled last";
    return (t.size() == 0 ? none : t.render()) + footer;
  }

  /** A path for display only; a failing provider costs the column, never the command. */
  private Optional<String> pathOf(long ino) {
    InodePaths p = paths.get();
    if (p == null) {
      return Optional.empty();
    }
    try {
      return p.pathOf(ino);
    } catch (RuntimeException e) {
      return Optional.empty();
    }
  }
}

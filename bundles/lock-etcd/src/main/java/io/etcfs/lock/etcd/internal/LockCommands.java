package io.etcfs.lock.etcd.internal;

import io.etcfs.spi.lock.LockService;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.shell.Args;
import io.etcfs.spi.shell.Table;
import org.apache.felix.service.command.Descriptor;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Reference;

/**
 * The Gogo command {@code locks}: the inode locks this node holds or awaits, from the etcd lock
 * service's own state, or with {@code --all} every lock key in etcd. A component beside {@link
 * EtcdLockService}, sharing its configuration, so it comes and goes with that backend.
 */
@Component(
    service = LockCommands.class,
    configurationPid = EtcdLockService.PID,
    configurationPolicy = ConfigurationPolicy.REQUIRE,
    property = {"osgi.command.scope=etcfs", "osgi.command.function=locks"})
public final class LockCommands {
  private static final String USAGE = "locks [--all] [--json]";

  private final MetaStore store;
  private final EtcdLockService locks;

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

  /** This node's inode locks, or with --all every lock key of the filesystem. */
  @Descriptor("inode locks held or awaited here; --all: every lock key in etcd")
  public String locks(@Descriptor("[--all] [--json] [-h]") String... words) {
    Args a = Args.parse("locks", USAGE, words, 0, 0, "--all", "--json");
    if (a.help()) {
      return a.usage() + "\nInode locks held or awaited on this node (etcd lock backend); "
          + "--all: every\nlock key in etcd, held or queued, with its node and fencing token.";
    }
    Table t = a.has("--all")
        ? LockRows.all(locks.prefix(), store.prefix(Keys.of(locks.prefix()), 0).kvs())
        : LockRows.local(locks.localLocks());
    if (a.has("--json")) {
      return t.json();
    }
    String none = a.has("--all") ? "no inode locks in etcd" : "no inode locks on this node";
    String footer = a.has("--all") ? "" : "\nrecalls served by this node: "
        + locks.recallsServed() + "\nTOKEN: fencing token; FOR_S: seconds held or awaited";
    return (t.size() == 0 ? none : t.render()) + footer;
  }
}

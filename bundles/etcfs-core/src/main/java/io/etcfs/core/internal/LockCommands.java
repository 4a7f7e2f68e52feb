package io.etcfs.core.internal;

import io.etcfs.spi.lock.LockMode;
import io.etcfs.spi.lock.LockReport;
import io.etcfs.spi.lock.LockReport.ClusterLock;
import io.etcfs.spi.lock.LockReport.LockState;
import io.etcfs.spi.shell.Completion;
import io.etcfs.spi.shell.InodePaths;
import io.etcfs.support.shell.Args;
import io.etcfs.support.shell.Table;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.felix.service.command.Descriptor;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;

/**
 * The Gogo command {@code locks}: the inode locks this node holds or awaits, or with {@code
 * --all} every lock request in the cluster, from whatever lock backend reports them ({@link
 * LockReport}, a whiteboard: no backend is down-cast, and a backend that reports nothing shows as
 * such). The PATH column comes from the core's {@link InodePaths} while it is there.
 */
@Component(
    service = LockCommands.class,
    property = {"osgi.command.scope=etcfs", "osgi.command.function=locks",
        Completion.PROPERTY + "=locks --all --json -h"})
public final class LockCommands {
  private static final String USAGE = "locks [--all] [--json]";

  private final List<LockReport> reports = new CopyOnWriteArrayList<>();
  private final AtomicReference<InodePaths> paths = new AtomicReference<>();
  private final AtomicReference<FenceLookup> fences = new AtomicReference<>();

  @Reference(
      name = "lockReport",
      cardinality = ReferenceCardinality.MULTIPLE,
      policy = ReferencePolicy.DYNAMIC,
      policyOption = ReferencePolicyOption.GREEDY)
  void bindLockReport(LockReport report) {
    reports.add(report);
  }

  void unbindLockReport(LockReport report) {
    reports.remove(report);
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

  @Reference(
      name = "fences",
      cardinality = ReferenceCardinality.OPTIONAL,
      policy = ReferencePolicy.DYNAMIC,
      policyOption = ReferencePolicyOption.GREEDY)
  void bindFences(FenceLookup service) {
    fences.set(service);
  }

  void unbindFences(FenceLookup service) {
    fences.compareAndSet(service, null);
  }

  /** This node's inode locks, or with --all every lock request of the filesystem. */
  @Descriptor("inode locks held or awaited here; --all: every lock request in the cluster")
  public String locks(@Descriptor("[--all] [--json] [-h]") String... words) {
    Args a = Args.parse("locks", USAGE, words, 0, 0, "--all", "--json");
    if (a.help()) {
      return a.usage() + "\nInode locks held or awaited on this node, as the lock backend "
          + "reports them; --all:\nevery lock request in the cluster, held or queued, with its "
          + "node and fencing\ntoken. PATH is the name this node last saw the inode under, - "
          + "where it knows none.";
    }
    if (reports.isEmpty()) {
      throw new IllegalStateException("locks: no lock backend reports its locks on this node");
    }
    StringBuilder out = new StringBuilder();
    for (LockReport r : reports) {
      if (reports.size() > 1 && !a.has("--json")) {
        out.append("lock backend ").append(r.backend()).append(":\n");
      }
      out.append(a.has("--all") ? all(r, a.has("--json")) : local(r, a.has("--json")));
    }
    return out.toString();
  }

  private String local(LockReport r, boolean json) {
    Table t = new Table().number("INODE").id("MODE").id("STATE").number("TOKEN")
        .number("FOR_S").number("WAITERS").number("RECALLS").text("PATH");
    for (LockState l : r.locks()) {
      t.row(inode(l.inode()), code(l.mode()), state(l.state()), l.token(),
          l.since().toMillis() / 100 / 10.0, l.waiters() < 0 ? null : l.waiters(), l.recalls(),
          pathOf(l.inode()).orElse(null));
    }
    if (json) {
      return t.json();
    }
    StringBuilder out = new StringBuilder(t.size() == 0 ? "no inode locks on this node"
        : t.render());
    for (Map.Entry<String, String> c : r.counters().entrySet()) {
      out.append('\n').append(c.getKey()).append(": ").append(c.getValue());
    }
    return out.append("\nTOKEN: fencing token; FOR_S: seconds held or awaited; RECALLS: served "
        + "here").toString();
  }

  /**
   * Whether a granted request's holder declared everything committed: the backend's word, or
   * the inode's fence naming that request's node clean (the core's record, whatever the backend).
   */
  private boolean clean(ClusterLock l) {
    if (l.clean()) {
      return true;
    }
    FenceLookup f = fences.get();
    return f != null && l.mode() == LockMode.EXCLUSIVE && f.fenceOf(l.inode())
        .filter(fence -> fence.clean() && fence.node().equals(l.node())).isPresent();
  }

  private String all(LockReport r, boolean json) {
    Optional<List<ClusterLock>> all = r.cluster();
    if (all.isEmpty()) {
      throw new IllegalStateException("locks --all: the " + r.backend()
          + " lock backend cannot list the cluster's locks");
    }
    Table t = new Table().number("INODE").id("MODE").id("STATE").id("NODE").number("TOKEN")
        .id("SESSION").text("PATH");
    for (ClusterLock l : all.get()) {
      t.row(inode(l.inode()), code(l.mode()), l.held() ? (clean(l) ? "clean" : "held")
          : "queued", l.node(), l.token(), l.session(), pathOf(l.inode()).orElse(null));
    }
    if (json) {
      return t.json();
    }
    return t.size() == 0 ? "no inode locks in the cluster" : t.render();
  }

  private static String state(LockReport.State s) {
    return switch (s) {
      case WAITING -> "waiting";
      case HELD -> "held";
      case RECALL_PENDING -> "recalling";
      case RELEASING -> "releasing";
    };
  }

  private static String code(LockMode mode) {
    return mode == LockMode.EXCLUSIVE ? "X" : "S";
  }

  /**
   * In decimal, as {@code inode}, {@code extents} and {@code ls -i} show it; a number in JSON.
   * Inode numbers are unsigned: one past 2^63 stays a string.
   */
  private static Object inode(long inode) {
    return inode >= 0 ? (Object) inode : Long.toUnsignedString(inode);
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

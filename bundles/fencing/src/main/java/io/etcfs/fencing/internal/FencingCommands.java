package io.etcfs.fencing.internal;

import io.etcfs.spi.fencing.Membership;
import io.etcfs.spi.lease.LeaseReport;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.shell.Completion;
import io.etcfs.support.shell.Args;
import io.etcfs.support.shell.Table;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;
import org.apache.felix.service.command.Descriptor;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Reference;

/**
 * The Gogo commands of the fencing bundle: {@code members}, {@code fenced}, {@code fence} and
 * {@code leases}. Gogo calls the public methods of any service registered with {@code
 * osgi.command.*} properties and prints the String they return; a command that fails throws,
 * and {@code etcfs shell -c} prints the message on one line and exits non-zero. Shares the
 * fencing configuration with {@link NodeMembership}.
 */
@Component(
    service = FencingCommands.class,
    configurationPid = NodeMembership.PID,
    configurationPolicy = ConfigurationPolicy.REQUIRE,
    property = {"osgi.command.scope=etcfs", "osgi.command.function=members",
        "osgi.command.function=fenced", "osgi.command.function=fence",
        "osgi.command.function=leases",
        Completion.PROPERTY + "=members --json -h", Completion.PROPERTY + "=fenced --json -h",
        Completion.PROPERTY + "=fence @node --yes -h", Completion.PROPERTY + "=leases --json -h"})
public final class FencingCommands {
  /** Every other lease holder on this node (lock session, POSIX-lock lease), whiteboard. */
  @Reference(
      service = LeaseReport.class,
      cardinality = org.osgi.service.component.annotations.ReferenceCardinality.MULTIPLE,
      policy = org.osgi.service.component.annotations.ReferencePolicy.DYNAMIC,
      fieldOption = org.osgi.service.component.annotations.FieldOption.UPDATE)
  private final java.util.List<LeaseReport> reports =
      new java.util.concurrent.CopyOnWriteArrayList<>();

  private static final String LEASES_NOTE = "LEFT_S: by this node's own deadline; ETCD_S: "
      + "etcd's view; LAST_ACK: when the\nlast acknowledged keep-alive was sent (- before the "
      + "first, TTL/3 after the join)";

  private final MetaStore store;
  private final Membership membership;
  private final String fsName;
  private final FencingKeys keys;
  private final Path device;

  @Activate
  public FencingCommands(
      @Reference(name = "metaStore") MetaStore store,
      @Reference(name = "membership") Membership membership,
      NodeMembership.Config config) {
    this.store = store;
    this.membership = membership;
    this.fsName = Names.check(NodeMembership.PID + ": fsName", config.fsName());
    this.keys = new FencingKeys(fsName);
    this.device = Path.of(config.device());
  }

  /** Every node: live members and incarnations whose recovery is pending. */
  @Descriptor("every node: generation, host, mountpoint, lease and heartbeat age, state")
  public String members(@Descriptor("[--json] [-h]") String... words) {
    Args a = Args.parse("members", "members [--json]", words, 0, 0, "--json");
    if (a.help()) {
      return a.usage() + "\nEvery node of " + fsName + ": members, and dead incarnations whose "
          + "heartbeat slot awaits recovery.";
    }
    List<MemberRows.Row> rows;
    try (HeartbeatDevice beats = HeartbeatDevice.open(device)) {
      rows = MemberRows.read(store, keys, beats::read, System.currentTimeMillis());
    } catch (IOException e) {
      throw new UncheckedIOException("members: cannot read the heartbeat slots on " + device
          + ": " + e.getMessage(), e);
    }
    Table t = MemberRows.table(rows);
    if (a.has("--json")) {
      return t.json();
    }
    return rows.isEmpty() ? "no members of " + fsName : t.render() + "\n" + MemberRows.NOTE;
  }

  /** The recovery records: who was fenced, by whom, when, and how it went. */
  @Descriptor("past fences: node, generation, recovered by, when, result, seconds")
  public String fenced(@Descriptor("[--json] [-h]") String... words) {
    Args a = Args.parse("fenced", "fenced [--json]", words, 0, 0, "--json");
    if (a.help()) {
      return a.usage() + "\nPast fences and recoveries of " + fsName + " (fences/ records).";
    }
    Table t = FenceRows.read(store, keys);
    if (a.has("--json")) {
      return t.json();
    }
    return t.size() == 0 ? "no fences recorded in " + fsName : t.render();
  }

  /**
   * Fences a live member by revoking its membership lease: its key goes at once, its next
   * keep-alive finds the lease gone and it fences itself, and a survivor recovers it as it would
   * a crashed node. Without {@code --yes} it only says what it would do, and fails, so a script
   * that forgot the flag does not carry on as if the node were fenced.
   */
  @Descriptor("fence a live node by revoking its membership lease (asks for --yes)")
  public String fence(@Descriptor("NODE [--yes] [-h]") String... words) {
    Args a = Args.parse("fence", "fence NODE [--yes]", words, 1, 1, "--yes");
    if (a.help()) {
      return a.usage() + "\nRevokes NODE's membership lease: it fences itself and a survivor "
          + "recovers it. Asks for --yes.";
    }
    String node = a.operands().get(0);
    KeyValue member = member(node);
    String what = "revoke the membership lease " + Long.toHexString(member.lease()) + " of "
        + node + " (generation " + member.createRevision() + "): it fences itself and a "
        + "survivor recovers it";
    if (!a.has("--yes")) {
      throw new IllegalStateException("fence: would " + what + "; to do it: fence " + node
          + " --yes");
    }
    store.revokeLease(member.lease());
    return "fence: revoked the membership lease " + Long.toHexString(member.lease()) + " of "
        + node + " (generation " + member.createRevision() + "); it fences itself at its next "
        + "keep-alive and a survivor recovers it (see: members, fenced)";
  }

  private KeyValue member(String node) {
    Names.check("fence: node name", node);
    Optional<KeyValue> member = store.get(keys.member(node));
    if (member.isEmpty()) {
      throw new IllegalArgumentException("fence: no live member named " + node + " in "
          + fsName + " (see: members)");
    }
    if (node.equals(membership.nodeName())) {
      throw new IllegalArgumentException("fence: " + node + " is this node; to take it out, "
          + "unmount it (etcfs umount)");
    }
    if (member.get().lease() == 0) {
      throw new IllegalStateException("fence: the member key of " + node + " has no lease");
    }
    return member.get();
  }

  /** This node's membership lease: id, TTL, time left by its own deadline, last keep-alive. */
  @Descriptor("this node's leases (membership, lock session, file locks): id, TTL, time left")
  public String leases(@Descriptor("[--json] [-h]") String... words) {
    Args a = Args.parse("leases", "leases [--json]", words, 0, 0, "--json");
    if (a.help()) {
      return a.usage() + "\nThis node's membership lease as the node sees it (its own deadline)"
          + " and as etcd sees it.";
    }
    if (!(membership instanceof NodeMembership m)) {
      throw new UnsupportedOperationException("leases: this node's membership is "
          + membership.getClass().getSimpleName() + ", which does not show its lease (issue #6)");
    }
    NodeMembership.LeaseState s = m.leaseState();
    long etcdLeft = store.leaseTimeToLive(s.id());
    Table t = new Table().id("LEASE").id("ID").number("TTL_S").number("LEFT_S")
        .number("ETCD_S").id("LAST_ACK").id("STATE");
    t.row("membership", Long.toHexString(s.id()), s.ttl().toSeconds(),
        s.left().toMillis() / 100 / 10.0, etcdLeft < 0 ? null : etcdLeft,
        s.lastAcknowledged() == null ? null : s.lastAcknowledged().truncatedTo(ChronoUnit.MILLIS).toString(),
        s.fenced() ? "fenced" : "live");
    for (LeaseReport report : reports) {
      for (LeaseReport.Lease l : report.leases()) {
        long etcd = store.leaseTimeToLive(l.id());
        t.row(l.kind(), Long.toHexString(l.id()), l.ttl().toSeconds(),
            l.left().toMillis() / 100 / 10.0, etcd < 0 ? null : etcd,
            l.lastAcknowledged().map(i -> i.truncatedTo(ChronoUnit.MILLIS).toString()).orElse(null),
            l.left().isNegative() || l.left().isZero() ? "lapsed" : "live");
      }
    }
    return a.has("--json") ? t.json() : t.render() + "\n" + LEASES_NOTE;
  }
}

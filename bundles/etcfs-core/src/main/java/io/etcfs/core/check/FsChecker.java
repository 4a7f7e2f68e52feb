package io.etcfs.core.check;

import io.etcfs.core.format.Superblock;
import io.etcfs.spi.fs.FsRecord;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Checks a filesystem's snapshot: the namespace (entries, link counts, reachability), the
 * blocks (extents, ownership records, allocator state) and what dead incarnations left behind,
 * and the filesystem record against the device's superblock. Reads nothing but what it is
 * given, so it runs the same on a snapshot of a live cluster and of a stopped one.
 */
public final class FsChecker {
  private FsChecker() {}

  /**
   * The result of a check: its report, and the fixes {@link FsRepair} applies.
   */
  public static final class Result {
    private final CheckReport report;
    final Model model;
    final Fixes fixes;

    Result(CheckReport report, Model model, Fixes fixes) {
      this.report = report;
      this.model = model;
      this.fixes = fixes;
    }

    public CheckReport report() {
      return report;
    }
  }

  /**
   * Checks a snapshot.
   *
   * @param superblock the device's superblock, or null if no device was given (then that check
   *     is listed as not made)
   * @param progress told of each phase, for a progress display
   */
  public static Result check(FsSnapshot snapshot, Superblock superblock, Consumer<String> progress) {
    progress.accept("decoding " + snapshot.kvs().size() + " keys");
    Model m = new Model(snapshot);
    List<Finding> out = new ArrayList<>(m.findings);
    List<String> notChecked = new ArrayList<>();
    Map<String, Long> stats = new LinkedHashMap<>();
    Fixes fixes = new Fixes();
    if (m.record == null) {
      if (out.stream().noneMatch(f -> f.kind().equals("record-corrupt"))) {
        out.add(Finding.of("record-missing", "fs", "no filesystem record: not an etcfs"
            + " filesystem (run 'etcfs format')"));
      }
      notChecked.add("everything else: without the filesystem record there is no geometry");
      return new Result(finish(snapshot, out, notChecked, stats), m, fixes);
    }
    stats.put("keys", (long) snapshot.kvs().size());
    stats.put("inodes", (long) m.inodes.size());
    stats.put("directories", m.inodes.values().stream().filter(i -> i.isDir()).count());
    stats.put("entries", (long) m.entries.size());
    progress.accept("checking " + m.inodes.size() + " inodes and " + m.entries.size()
        + " entries");
    new NamespaceCheck(m, fixes, out).run();
    progress.accept("checking blocks");
    new SpaceCheck(m, fixes, out, stats).run();
    progress.accept("checking what dead nodes hold");
    new LivenessCheck(m, fixes, out).run();
    superblock(m.record, superblock, out, notChecked);
    notChecked.add("file data on the device (only metadata and the superblock are read)");
    if (m.record.allocBackend().equals("arena")) {
      notChecked.add("alloc-arena's free, reserved and promised blocks: they live in each"
          + " node's memory (rebuilt from blocks/ at each claim); checked are the claims and the"
          + " ownership records they are rebuilt from");
    }
    if (m.record.lockBackend().equals("hazelcast")) {
      notChecked.add("inode locks: the Hazelcast backend holds them in Hazelcast, not in etcd");
    }
    return new Result(finish(snapshot, out, notChecked, stats), m, fixes);
  }

  private static CheckReport finish(FsSnapshot s, List<Finding> out, List<String> notChecked,
      Map<String, Long> stats) {
    List<Finding> ordered = new ArrayList<>(out.stream().filter(f -> !f.pending()).toList());
    ordered.addAll(out.stream().filter(Finding::pending).toList());
    return new CheckReport(s.fsName(), s.revision(), ordered, notChecked, stats);
  }

  private static void superblock(FsRecord r, Superblock sb, List<Finding> out,
      List<String> notChecked) {
    if (sb == null) {
      notChecked.add("the device's superblock: no device given (--device)");
      return;
    }
    Superblock want = Superblock.of(r);
    field(out, "uuid", want.uuid(), sb.uuid());
    field(out, "name", want.name(), sb.name());
    field(out, "blockSize", want.blockSize(), sb.blockSize());
    field(out, "arenaSize", want.arenaSize(), sb.arenaSize());
    field(out, "deviceSize", want.deviceSize(), sb.deviceSize());
    field(out, "dataStart", want.dataStart(), sb.dataStart());
    field(out, "arenas", r.arenas(), sb.arenaCount());
  }

  private static void field(List<Finding> out, String name, Object record, Object device) {
    if (!Objects.equals(record, device)) {
      out.add(Finding.of("superblock-mismatch", "fs", "the record's " + name + " is " + record
          + ", the device's superblock says " + device + " (not repaired)"));
    }
  }
}

package io.etcfs.launcher.cli;

import io.etcfs.core.check.CheckReport;
import io.etcfs.core.check.Finding;
import io.etcfs.core.check.FsChecker;
import io.etcfs.core.check.FsRepair;
import io.etcfs.core.check.FsSnapshot;
import io.etcfs.core.format.FilesystemCheck;
import io.etcfs.core.format.FormatException;
import io.etcfs.core.format.Superblock;
import io.etcfs.etcd.client.EtcdMetaStore;
import io.etcfs.launcher.UserError;
import io.etcfs.spi.fs.Keyspace;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.MetaStoreException;
import io.etcfs.spi.meta.RangeResult;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "fsck", mixinStandardHelpOptions = true,
    description = {"Check a filesystem's metadata in etcd (and its device's superblock), online"
        + " or offline; --repair fixes what needs no guess, with every node stopped.",
        "Exit status: 0 clean, 1 problems found (or left after --repair), 2 bad usage,"
        + " 3 could not check or repair (etcd unreachable, live members for --repair)."})
final class FsckCommand implements Callable<Integer> {
  /** Keys per range read: far below etcd's response limits. */
  static final int PAGE = 2_000;

  @Mixin EtcdOptions etcd;

  @Option(names = "--dir", paramLabel = "DIR", description = "A local cluster made by 'etcfs up'.")
  Path dir;

  @Option(names = "--name", paramLabel = "FS", description = "Filesystem name (default: etcfs).")
  String name;

  @Option(names = "--device", paramLabel = "PATH",
      description = "The shared device, to check its superblock (default with --dir: the"
          + " cluster's).")
  Path device;

  @Option(names = "--json", description = "Print the report as one JSON object.")
  boolean json;

  @Option(names = "--repair",
      description = "Fix what can be fixed without guessing. Refused while any node is a member.")
  boolean repair;

  @Override
  public Integer call() {
    try {
      return run();
    } catch (UserError e) {
      System.err.println("etcfs: " + e.getMessage());
      return 2;
    } catch (MetaStoreException e) {
      System.err.println("etcfs: " + Main.describe(e));
      return 3;
    } catch (FsRepair.RepairException e) {
      System.err.println("etcfs: " + e.getMessage());
      return 3;
    }
  }

  private int run() throws FsRepair.RepairException {
    EtcdOptions.Filesystem fs;
    try {
      fs = etcd.filesystem(dir, name);
    } catch (IOException e) {
      throw new UserError("cannot read " + dir + ": " + e.getMessage());
    }
    try {
      Keyspace.of(fs.name());
    } catch (IllegalArgumentException e) {
      throw new UserError(e.getMessage());
    }
    Path dev = device != null ? device : dir != null ? ClusterEnv.read(dir).device() : null;
    if (dev != null && !Files.exists(dev)) {
      throw new UserError("device " + dev + " does not exist");
    }
    Progress progress = Progress.onTerminal();
    try (EtcdMetaStore store = EtcdOptions.connect(fs.connection())) {
      if (store.get(Keyspace.of(fs.name()).record()).isEmpty()) {
        throw new UserError("no filesystem '" + fs.name() + "' in etcd at " + store.describe());
      }
      Superblock sb = dev == null ? null : superblock(dev);
      FsChecker.Result result = check(store, fs.name(), sb, progress);
      List<String> repaired = new ArrayList<>();
      if (repair && !result.report().clean()) {
        progress.done();
        try {
          FsRepair.repair(store, result, did -> {
            repaired.add(did);
            if (!json) {
              System.out.println("repaired: " + did);
            }
          });
        } catch (FsRepair.RepairException | MetaStoreException e) {
          if (json) {
            System.out.println("{\"error\":" + FsckJson.str(e.getMessage()) + ",\"repaired\":"
                + FsckJson.strings(repaired) + "}");
          }
          throw e;
        }
        result = check(store, fs.name(), sb, progress);
      }
      progress.done();
      print(result.report(), repaired);
      return result.report().clean() ? 0 : 1;
    } finally {
      progress.done();
    }
  }

  private static Superblock superblock(Path dev) {
    try {
      return FilesystemCheck.readSuperblock(dev);
    } catch (FormatException e) {
      throw new UserError(e.getMessage());
    } catch (IOException e) {
      throw new UserError("cannot read " + dev + ": " + e.getMessage());
    }
  }

  /**
   * Reads every key of the filesystem at one revision (the first page's; later pages are pinned
   * to it), then checks the snapshot.
   */
  static FsChecker.Result check(EtcdMetaStore store, String fs, Superblock sb, Progress progress) {
    byte[] prefix = Keys.of(Keyspace.of(fs).root());
    byte[] end = Keys.prefixEnd(prefix);
    int[] limit = {PAGE};
    RangeResult first = page(store, prefix, end, limit, 0);
    long revision = first.revision();
    long total = first.more() ? store.countAt(prefix, end, revision) : first.kvs().size();
    List<KeyValue> all = new ArrayList<>(first.kvs());
    RangeResult page = first;
    while (page.more() && !page.kvs().isEmpty()) {
      progress.bar("reading etcd at revision " + revision, all.size(), total);
      byte[] from = Keys.after(page.kvs().get(page.kvs().size() - 1).key());
      page = page(store, from, end, limit, revision);
      all.addAll(page.kvs());
    }
    progress.bar("reading etcd at revision " + revision, all.size(), total);
    return FsChecker.check(new FsSnapshot(fs, revision, all), sb, progress::phase);
  }

  /**
   * One page; a page too large for the client's message limit (keys with large values: xattrs
   * reach 64 KiB) is read again with half the keys, and later pages keep the smaller limit.
   */
  private static RangeResult page(EtcdMetaStore store, byte[] from, byte[] end, int[] limit,
      long revision) {
    while (true) {
      try {
        return store.rangeAt(from, end, limit[0], revision);
      } catch (MetaStoreException e) {
        if (e.kind() != MetaStoreException.Kind.TOO_LARGE || limit[0] == 1) {
          throw e;
        }
        limit[0] = Math.max(1, limit[0] / 2);
      }
    }
  }

  private void print(CheckReport r, List<String> repaired) {
    PrintStream out = System.out;
    if (json) {
      out.println(FsckJson.of(r, repair ? repaired : null));
      return;
    }
    r.faults().forEach(f -> out.println(f.line()));
    r.pending().forEach(f -> out.println("pending " + f.line()));
    r.notChecked().forEach(s -> out.println("not checked: " + s));
    var s = r.stats();
    out.printf("fsck: '%s' at revision %d: %d inodes, %d directories, %d entries, %d extents;"
            + " %d of %d data blocks referenced: %s%n", r.fsName(), r.revision(),
        s.getOrDefault("inodes", 0L), s.getOrDefault("directories", 0L),
        s.getOrDefault("entries", 0L), s.getOrDefault("extents", 0L),
        s.getOrDefault("referencedBlocks", 0L), s.getOrDefault("dataBlocks", 0L),
        r.clean() ? "clean" : r.faults().size() + " problem(s)");
  }

  /** Progress on stderr, only when stderr is a terminal: a bar while reading, then phases. */
  static final class Progress {
    private final PrintStream err;
    private boolean shown;

    private Progress(PrintStream err) {
      this.err = err;
    }

    static Progress onTerminal() {
      return new Progress(stderrIsTerminal() ? System.err : null);
    }

    private static boolean stderrIsTerminal() {
      try {
        String t = Files.readSymbolicLink(Path.of("/proc/self/fd/2")).toString();
        return t.startsWith("/dev/pts/") || t.startsWith("/dev/tty");
      } catch (IOException | UnsupportedOperationException e) {
        return false;
      }
    }

    void bar(String what, long done, long total) {
      if (err == null) {
        return;
      }
      int width = 30;
      int filled = total <= 0 ? width : (int) Math.min(width, done * width / total);
      err.print("\r\033[K" + what + " [" + "#".repeat(filled) + ".".repeat(width - filled) + "] "
          + done + "/" + total + " keys");
      err.flush();
      shown = true;
    }

    void phase(String what) {
      if (err != null) {
        err.print("\r\033[K" + what);
        err.flush();
        shown = true;
      }
    }

    void done() {
      if (err != null && shown) {
        err.print("\r\033[K");
        err.flush();
        shown = false;
      }
    }
  }
}

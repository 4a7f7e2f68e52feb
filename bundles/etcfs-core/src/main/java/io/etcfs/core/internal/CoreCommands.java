package io.etcfs.core.internal;

import io.etcfs.core.fs.EtcFs;
import io.etcfs.core.fs.Stats;
import io.etcfs.core.fs.meta.FileExtent;
import io.etcfs.spi.vfs.Attr;
import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.support.shell.Json;
import io.etcfs.support.shell.Table;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The core's shell commands: {@code inode PATH|INO}, {@code extents PATH|INO} and {@code stats},
 * each with {@code --json}. A path is one below this node's mountpoint, or a path from the
 * filesystem's root ({@code /dir/file}).
 */
final class CoreCommands {
  private final EtcFs fs;
  private final String mountpoint;
  private final int blockSize;

  CoreCommands(EtcFs fs, String mountpoint, int blockSize) {
    this.fs = fs;
    this.mountpoint = mountpoint == null ? "" : mountpoint.replaceAll("/+$", "");
    this.blockSize = blockSize;
  }

  String inode(String target, boolean json) throws FsException {
    Attr a = attr(target);
    Map<String, Object> f = new LinkedHashMap<>();
    f.put("ino", a.ino());
    f.put("type", type(a.mode()));
    f.put("mode", String.format("0%o", a.mode() & 07777));
    f.put("uid", a.uid());
    f.put("gid", a.gid());
    f.put("nlink", a.nlink());
    f.put("size", a.size());
    f.put("blocks", a.blocks());
    f.put("atime", time(a.atimeNs()));
    f.put("mtime", time(a.mtimeNs()));
    f.put("ctime", time(a.ctimeNs()));
    if (json) {
      return Json.object(f);
    }
    return f.entrySet().stream().map(e -> String.format("%-7s %s", e.getKey(), e.getValue()))
        .collect(Collectors.joining("\n"));
  }

  String extents(String target, boolean json) throws FsException {
    Attr a = attr(target);
    List<FileExtent> map = fs.extentMap(a.ino());
    Table t = new Table().number("FILE_BLOCK").number("DEVICE_BLOCK").number("BLOCKS")
        .number("DEVICE_OFFSET").number("BYTES");
    for (FileExtent e : map) {
      t.row(e.fileBlock(), e.deviceBlock(), e.length(), e.deviceBlock() * blockSize,
          e.length() * blockSize);
    }
    if (json) {
      return t.json();
    }
    return t.render() + "\n" + map.size() + " extent(s) of inode " + a.ino() + ", "
        + map.stream().mapToLong(FileExtent::length).sum() + " blocks of " + blockSize
        + " bytes; size " + a.size();
  }

  String stats(boolean json) {
    Stats s = fs.stats();
    Table t = new Table().id("OP").number("CALLS").number("ERRORS").number("MEAN_US")
        .number("P50_US").number("P90_US").number("P99_US");
    s.ops().forEach((name, op) -> t.row(name, op.calls(), op.errors(), op.meanMicros(),
        op.percentileMicros(0.5), op.percentileMicros(0.9), op.percentileMicros(0.99)));
    EtcFs.CacheCounts cache = fs.cacheCounts();
    Map<String, Long> totals = new LinkedHashMap<>();
    totals.put("etcd_gets", s.storeGets());
    totals.put("etcd_ranges", s.storeRanges());
    totals.put("etcd_commits", s.storeCommits());
    totals.put("etcd_commit_mean_us", s.storeCommitTime().meanMicros());
    totals.put("cache_hits", cache.hits());
    totals.put("cache_misses", cache.misses());
    totals.put("recalls_served", s.recalls());
    totals.put("locks_made_shared", s.downgrades());
    totals.put("device_read_bytes", s.deviceReadBytes());
    totals.put("device_write_bytes", s.deviceWriteBytes());
    totals.put("written_ahead_blocks", s.writtenAheadBlocks());
    totals.put("write_out_waits", s.writeOutWaits());
    totals.put("overwritten_in_place_blocks", s.overwrittenInPlaceBlocks());
    totals.put("delegations_taken", s.delegations());
    totals.put("queued_unlinks", s.queuedUnlinks());
    totals.put("queued_creates", s.queuedCreates());
    totals.put("queued_setattrs", s.queuedSetattrs());
    totals.put("queued_name_changes", s.queuedLinks());
    totals.put("queued_commits", s.queuedCommits());
    totals.put("queue_full_waits", s.queueFullWaits());
    totals.put("creates_with_data", s.carriedCreates());
    totals.put("lost_unlinks", s.lostUnlinks());
    totals.put("lost_creates", s.lostCreates());
    if (json) {
      Map<String, Object> all = new LinkedHashMap<>();
      all.put("ops", new Json.Raw(t.json()));
      all.putAll(totals);
      return Json.object(all);
    }
    long lookups = cache.hits() + cache.misses();
    return t.render() + "\n\n"
        + String.format("etcd round trips  %,d reads, %,d range reads, %,d transactions%n",
            s.storeGets(), s.storeRanges(), s.storeCommits())
        + String.format("etcd commit time  mean %,d us, p50 %,d us, p99 %,d us%n",
            s.storeCommitTime().meanMicros(), s.storeCommitTime().percentileMicros(0.5),
            s.storeCommitTime().percentileMicros(0.99))
        + String.format("metadata cache    %,d hits, %,d misses (%s hit)%n", cache.hits(), cache.misses(),
            lookups == 0 ? "-" : String.format("%.1f %%", 100.0 * cache.hits() / lookups))
        + String.format("recalls served    %,d (and %,d locks made shared in place)%n",
            s.recalls(), s.downgrades())
        + String.format("device            %,d bytes read, %,d bytes written"
            + " (%,d blocks ahead of their commit, %,d waits for them to land, %,d over their"
            + " committed blocks)%n",
            s.deviceReadBytes(), s.deviceWriteBytes(), s.writtenAheadBlocks(),
            s.writeOutWaits(), s.overwrittenInPlaceBlocks())
        + String.format("delegations       %,d directories taken; %,d unlinks, %,d creates and"
            + " %,d directory attribute changes queued, in %,d commits (%,d and %,d lost);"
            + " %,d creates carried their data, %,d were linked, renamed or unlinked while"
            + " queued; %,d waited for a full queue%n", s.delegations(), s.queuedUnlinks(),
            s.queuedCreates(), s.queuedSetattrs(), s.queuedCommits(), s.lostUnlinks(),
            s.lostCreates(), s.carriedCreates(), s.queuedLinks(), s.queueFullWaits())
        + "latency percentiles are the upper edge of a power-of-two bucket (within 2x)";
  }

  private Attr attr(String target) throws FsException {
    if (target.matches("\\d+")) {
      return fs.getattr(Long.parseLong(target));
    }
    String path = target;
    boolean underMount = !mountpoint.isEmpty()
        && (path.equals(mountpoint) || path.startsWith(mountpoint + "/"));
    if (underMount) {
      path = path.substring(mountpoint.length());
      path = path.isEmpty() ? "/" : path;
    } else if (!path.startsWith("/")) {
      throw new IllegalArgumentException("'" + target + "' is neither an inode number nor a "
          + "path (give one under " + mountpoint + " or from the filesystem's root, /dir/file)");
    }
    try {
      return fs.resolve(path, Caller.ROOT);
    } catch (FsException e) {
      if (e.errno() != Errno.ENOENT && e.errno() != Errno.ENOTDIR) {
        throw e;
      }
      // A path outside the mount is taken from the filesystem's root: say so when it is not there.
      throw new IllegalArgumentException("'" + target + "': no such file in this filesystem"
          + (underMount ? "" : " (a path outside " + mountpoint + " is read from the "
              + "filesystem's root)"));
    }
  }

  private static String type(int mode) {
    return switch (mode & Attr.S_IFMT) {
      case Attr.S_IFREG -> "regular file";
      case Attr.S_IFDIR -> "directory";
      case Attr.S_IFLNK -> "symbolic link";
      case Attr.S_IFIFO -> "fifo";
      case Attr.S_IFSOCK -> "socket";
      case Attr.S_IFCHR -> "character device";
      case Attr.S_IFBLK -> "block device";
      default -> "unknown";
    };
  }

  private static String time(long ns) {
    return Instant.ofEpochSecond(ns / 1_000_000_000L, ns % 1_000_000_000L).toString();
  }
}

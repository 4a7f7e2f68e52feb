package io.etcfs.launcher.experiment;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The workloads of {@code etcfs experiment}, each a {@link Workload} over the nodes' mounts.
 * Every write carries a header (node, sequence) so that what is read back can be checked.
 */
public final class Workloads {
  private Workloads() {}

  /** What one operation of {@code workload} is, for the report. */
  public static String describe(String workload, int record) {
    String rec = record % 1024 == 0 ? record / 1024 + " KiB" : record + " bytes";
    return switch (workload) {
      case "handoff" -> "One operation is one hand-over: the nodes driving take turns; the node"
          + " whose turn it is reads the file the previous one wrote (" + rec + ", written with"
          + " fsync, its header checked; the time from open to the first byte is timed), then"
          + " writes it anew and passes the turn on. With one node it hands over to itself.";
      case "shared-writers" -> "One operation is one append of " + rec + " with fdatasync to"
          + " one file every driving node appends to (a new file per phase).";
      case "shared-creates" -> "One operation is one create of a file of " + rec + " (create,"
          + " write, close) in one directory every driving node creates in (a new directory"
          + " per phase).";
      case "node-kill" -> "One operation is one append of " + rec + " with fdatasync by a node"
          + " to a file of its own. In each phase the last driving node's process is killed"
          + " (SIGKILL) a quarter into the phase; the first node then writes the victim's file"
          + " until a write succeeds (takeover: kill to that write's fsync), and the victim is"
          + " mounted again (restart: kill to mounted, including its membership lease running"
          + " out); the phase lasts at least until it is back.";
      case "mixed" -> "One operation is, in turn on each driving node: an append of " + rec
          + " with fdatasync to one shared file, a create of a file of " + rec + " in one"
          + " shared directory, and a read of the shared file's last " + rec + " (written by"
          + " any node).";
      default -> throw new IllegalArgumentException(workload);
    };
  }

  /** The latencies {@code workload} times, by name. */
  public static List<String> latencies(String workload) {
    return switch (workload) {
      case "handoff" -> List.of("first byte");
      case "node-kill" -> List.of("takeover", "restart");
      default -> List.of();
    };
  }

  /**
   * The workload called {@code name} over {@code mounts} (index = node), its files in
   * {@code dir} (a directory name at the root of the filesystem).
   */
  static Workload of(String name, List<Path> mounts, String dir, int record) {
    return switch (name) {
      case "handoff" -> new Handoff(mounts, dir, record);
      case "shared-writers" -> new SharedWriters(mounts, dir, record);
      case "shared-creates" -> new SharedCreates(mounts, dir, record);
      case "node-kill" -> new OwnWriters(mounts, dir, record);
      case "mixed" -> new Mixed(mounts, dir, record);
      default -> throw new IllegalArgumentException(name);
    };
  }

  /** A record: node and sequence in its first 16 bytes, then filler. */
  static ByteBuffer record(int size, int node, long seq) {
    ByteBuffer b = ByteBuffer.allocate(Math.max(16, size));
    b.putLong(node).putLong(seq);
    byte[] fill = ("node" + (node + 1) + " ").getBytes(StandardCharsets.US_ASCII);
    while (b.hasRemaining()) {
      b.put(fill[b.position() % fill.length]);
    }
    return b.flip();
  }

  static void writeAll(FileChannel ch, ByteBuffer b) throws IOException {
    while (b.hasRemaining()) {
      ch.write(b);
    }
  }

  /** What the workloads share: the mounts, their directory, one open channel per node. */
  abstract static class Base implements Workload {
    final List<Path> mounts;
    final String dir;
    final int record;
    final FileChannel[] channels;
    final int[] channelSet;
    final AtomicLongArray seq;

    Base(List<Path> mounts, String dir, int record) {
      this.mounts = mounts;
      this.dir = dir;
      this.record = record;
      this.channels = new FileChannel[mounts.size()];
      this.channelSet = new int[mounts.size()];
      this.seq = new AtomicLongArray(mounts.size());
    }

    Path on(int node, String name) {
      return mounts.get(node).resolve(dir).resolve(name);
    }

    @Override
    public void prepare(int fileSet) throws IOException {
      Files.createDirectories(mounts.get(0).resolve(dir));
    }

    /** Node {@code node}'s appending channel to {@code name}, opened again for a new set. */
    FileChannel appender(int node, String name, int fileSet) throws IOException {
      if (channels[node] == null || channelSet[node] != fileSet) {
        reset(node);
        channels[node] = FileChannel.open(on(node, name), StandardOpenOption.CREATE,
            StandardOpenOption.WRITE, StandardOpenOption.APPEND);
        channelSet[node] = fileSet;
      }
      return channels[node];
    }

    void append(int node, String name, int fileSet) throws IOException {
      FileChannel ch = appender(node, name, fileSet);
      writeAll(ch, record(record, node, seq.getAndIncrement(node)));
      ch.force(false);
    }

    @Override
    public void reset(int node) {
      FileChannel ch = channels[node];
      channels[node] = null;
      if (ch != null) {
        try {
          ch.close();
        } catch (IOException e) {
          // a channel on a mount that went away: nothing to keep
        }
      }
    }
  }

  /** Every node appends to one shared file. */
  static final class SharedWriters extends Base {
    SharedWriters(List<Path> mounts, String dir, int record) {
      super(mounts, dir, record);
    }

    @Override
    public void prepare(int fileSet) throws IOException {
      super.prepare(fileSet);
      Files.deleteIfExists(mounts.get(0).resolve(dir).resolve("shared-" + (fileSet - 2)));
      Files.write(mounts.get(0).resolve(dir).resolve("shared-" + fileSet), new byte[0]);
    }

    @Override
    public boolean op(int node, Load.Current c, Load load) throws IOException {
      append(node, "shared-" + c.fileSet(), c.fileSet());
      return true;
    }
  }

  /** Every node appends to a file of its own (the node-kill workload's writers). */
  static final class OwnWriters extends Base {
    OwnWriters(List<Path> mounts, String dir, int record) {
      super(mounts, dir, record);
    }

    @Override
    public boolean op(int node, Load.Current c, Load load) throws IOException {
      // one file per node for the whole run: the takeover writes to the victim's
      append(node, "own-" + (node + 1), 0);
      return true;
    }

    /** The takeover: one append to {@code victim}'s file through {@code node}'s mount. */
    void appendAs(int node, int victim) throws IOException {
      try (FileChannel ch = FileChannel.open(on(node, "own-" + (victim + 1)),
          StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
        writeAll(ch, record(record, node, -1));
        ch.force(false);
      }
    }
  }

  /** Every node creates files in one shared directory. */
  static final class SharedCreates extends Base {
    SharedCreates(List<Path> mounts, String dir, int record) {
      super(mounts, dir, record);
    }

    @Override
    public void prepare(int fileSet) throws IOException {
      Files.createDirectories(mounts.get(0).resolve(dir).resolve("d-" + fileSet));
    }

    @Override
    public boolean op(int node, Load.Current c, Load load) throws IOException {
      long s = seq.getAndIncrement(node);
      try (FileChannel ch = FileChannel.open(
          on(node, "d-" + c.fileSet() + "/n" + (node + 1) + "-" + s),
          StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
        writeAll(ch, record(record, node, s));
      }
      return true;
    }
  }

  /** The nodes take turns writing one file and reading what the previous one wrote. */
  static final class Handoff extends Base {
    private final AtomicInteger turn = new AtomicInteger();
    private volatile long written = -1;
    private volatile int writtenSet = -1;
    private volatile int writer = -1;

    Handoff(List<Path> mounts, String dir, int record) {
      super(mounts, dir, Math.max(16, record));
    }

    @Override
    public boolean op(int node, Load.Current c, Load load) throws IOException {
      int t = turn.get();
      if (t >= c.active()) {
        turn.compareAndSet(t, 0); // fewer nodes drive now: the first takes the turn
        return false;
      }
      if (t != node) {
        return false;
      }
      Path f = on(node, "handoff-" + c.fileSet());
      if (writtenSet == c.fileSet() && written >= 0) {
        ByteBuffer first = ByteBuffer.allocate(16);
        long t0 = System.nanoTime();
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
          ch.read(first);
          double ms = (System.nanoTime() - t0) / 1e6;
          while (first.hasRemaining() && ch.read(first) >= 0) {
            // the rest of the header
          }
          ByteBuffer rest = ByteBuffer.allocate(record - 16);
          while (rest.hasRemaining() && ch.read(rest) >= 0) {
            // read the whole file, as a reader would
          }
          first.flip();
          long from = first.remaining() == 16 ? first.getLong() : -1;
          long s = first.remaining() == 8 ? first.getLong() : -1;
          if (from != writer || s != written) {
            throw new IOException("node" + (node + 1) + " read " + f.getFileName() + " as written"
                + " by node" + (from + 1) + " #" + s + ", not node" + (writer + 1) + " #"
                + written);
          }
          load.latency("first byte", ms);
        }
      }
      long s = seq.incrementAndGet(0);
      try (FileChannel ch = FileChannel.open(f, StandardOpenOption.CREATE,
          StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
        writeAll(ch, record(record, node, s));
        ch.force(true);
      }
      writer = node;
      written = s;
      writtenSet = c.fileSet();
      turn.set((node + 1) % c.active());
      return true;
    }
  }

  /** Appends, creates and reads, in turn on every node. */
  static final class Mixed extends Base {
    private final AtomicLongArray step;

    Mixed(List<Path> mounts, String dir, int record) {
      super(mounts, dir, record);
      this.step = new AtomicLongArray(mounts.size());
    }

    @Override
    public void prepare(int fileSet) throws IOException {
      super.prepare(fileSet);
      Files.deleteIfExists(mounts.get(0).resolve(dir).resolve("shared-" + (fileSet - 2)));
      Files.write(mounts.get(0).resolve(dir).resolve("shared-" + fileSet), new byte[0]);
      Files.createDirectories(mounts.get(0).resolve(dir).resolve("d-" + fileSet));
    }

    @Override
    public boolean op(int node, Load.Current c, Load load) throws IOException {
      long s = step.getAndIncrement(node);
      switch ((int) (s % 3)) {
        case 0 -> append(node, "shared-" + c.fileSet(), c.fileSet());
        case 1 -> {
          try (FileChannel ch = FileChannel.open(
              on(node, "d-" + c.fileSet() + "/n" + (node + 1) + "-" + s),
              StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            writeAll(ch, record(record, node, s));
          }
        }
        default -> {
          try (FileChannel ch = FileChannel.open(on(node, "shared-" + c.fileSet()),
              StandardOpenOption.READ)) {
            long size = ch.size();
            ByteBuffer b = ByteBuffer.allocate(record);
            long at = Math.max(0, size - record);
            while (b.hasRemaining() && ch.read(b, at + b.position()) > 0) {
              // up to the last record
            }
            if (size >= record && b.position() != record) {
              throw new IOException("short read of the shared file: " + b.position() + " of "
                  + record + " bytes at " + at + " (size " + size + ")");
            }
          }
        }
      }
      return true;
    }
  }
}

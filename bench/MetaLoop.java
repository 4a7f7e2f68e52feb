import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Instant;
import java.util.Arrays;

/**
 * The metadata loop of bench/realwork.sh, run as a single-file source program:
 *
 *   java bench/MetaLoop.java DIR FILES BARRIER_DIR PROCS ID
 *
 * Over FILES files in DIR it runs four phases, one plain call per operation and no caching:
 * create (open O_CREAT, write 100 B, close), stat, open+read+close, unlink. Before each phase it
 * waits at a barrier with the other PROCS-1 processes (a file per process and phase in
 * BARRIER_DIR, on a local directory), so the JVM's start is never timed and the processes run each
 * phase together. It prints one line per phase with its own wall-clock start and end (epoch ns,
 * comparable across processes), from which the script computes the common rate:
 *
 *   op=create procs=8 id=3 n=250 start_ns=... end_ns=... ops_per_s=...
 */
public class MetaLoop {
  public static void main(String[] args) throws Exception {
    if (args.length != 5) {
      System.err.println("usage: java MetaLoop.java DIR FILES BARRIER_DIR PROCS ID");
      System.exit(2);
    }
    Path dir = Path.of(args[0]);
    int n = Integer.parseInt(args[1]);
    Path barrier = Path.of(args[2]);
    int procs = Integer.parseInt(args[3]);
    String id = args[4];
    Files.createDirectories(dir);
    Path[] files = new Path[n];
    for (int i = 0; i < n; i++) files[i] = dir.resolve("f" + i);
    byte[] data = new byte[100];
    Arrays.fill(data, (byte) 'x');
    byte[] buf = new byte[4096];

    for (String op : new String[] {"create", "stat", "read", "unlink"}) {
      await(barrier, op, procs, id);
      long start = epochNanos();
      switch (op) {
        case "create":
          for (Path f : files) {
            try (FileOutputStream out = new FileOutputStream(f.toFile())) {
              out.write(data);
            }
          }
          break;
        case "stat":
          for (Path f : files) {
            if (Files.readAttributes(f, BasicFileAttributes.class).size() != data.length) {
              throw new IOException(f + ": wrong size");
            }
          }
          break;
        case "read":
          for (Path f : files) {
            int total = 0;
            try (FileInputStream in = new FileInputStream(f.toFile())) {
              for (int r; (r = in.read(buf)) > 0; ) total += r;
            }
            if (total != data.length) throw new IOException(f + ": read " + total + " bytes");
          }
          break;
        default:
          for (Path f : files) Files.delete(f);
      }
      long end = epochNanos();
      System.out.printf("op=%s procs=%d id=%s n=%d start_ns=%d end_ns=%d ops_per_s=%.0f%n",
          op, procs, id, n, start, end, n * 1e9 / Math.max(1, end - start));
      System.out.flush();
    }
  }

  private static long epochNanos() {
    Instant now = Instant.now();
    return now.getEpochSecond() * 1_000_000_000L + now.getNano();
  }

  /** Marks this process at PHASE and waits until all PROCS have. */
  private static void await(Path barrier, String phase, int procs, String id) throws Exception {
    Path mine = barrier.resolve(phase + "." + id);
    Files.createDirectories(barrier);
    Files.write(mine, new byte[0]);
    String prefix = phase + ".";
    while (true) {
      long arrived;
      try (var s = Files.list(barrier)) {
        arrived = s.filter(p -> p.getFileName().toString().startsWith(prefix)).count();
      }
      if (arrived >= procs) return;
      Thread.sleep(1);
    }
  }
}

package io.etcfs.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Sizes from the issue, on a real mount: a directory of 100,000 entries listed completely and
 * with stable offsets while it changes, and a file many times larger than the node's memory
 * written and read back byte for byte.
 */
@Timeout(1200)
class ScaleIT {
  @TempDir Path tmp;
  LocalCluster cluster;

  @AfterEach
  void down() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void aDirectoryOf100000EntriesListsCompletelyAndStablyWhileItChanges() throws Exception {
    cluster = LocalCluster.up(tmp, 1, "1G");
    Path dir = Files.createDirectory(cluster.mount(1).resolve("big"));
    int n = 100_000;
    int threads = 4;
    long t0 = System.nanoTime();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int first = t;
        done.add(pool.submit(() -> {
          for (int i = first; i < n; i += threads) {
            Files.createFile(dir.resolve("entry-" + i));
          }
          return null;
        }));
      }
      for (Future<?> f : done) {
        f.get();
      }
      double seconds = (System.nanoTime() - t0) / 1e9;
      System.out.printf("ScaleIT: %d creates by %d threads in %.1f s (%.0f/s)%n", n, threads,
          seconds, n / seconds);

      // List while another writer adds and removes names of its own: every entry that stays
      // must be listed exactly once (offsets survive changes), and nothing else may appear.
      AtomicBoolean stop = new AtomicBoolean();
      AtomicLong churned = new AtomicLong();
      Future<?> churn = pool.submit(() -> {
        for (int i = 0; !stop.get(); i++) {
          Path p = dir.resolve("churn-" + (i % 50));
          if (Files.exists(p)) {
            Files.delete(p);
          } else {
            Files.createFile(p);
          }
          churned.incrementAndGet();
        }
        return null;
      });
      Set<String> seen = new HashSet<>();
      List<String> duplicates = new ArrayList<>();
      try (DirectoryStream<Path> s = Files.newDirectoryStream(dir)) {
        for (Path p : s) {
          String name = p.getFileName().toString();
          if (!seen.add(name) && name.startsWith("entry-")) {
            duplicates.add(name);
          }
        }
      } finally {
        stop.set(true);
        churn.get();
      }
      assertTrue(duplicates.isEmpty(), "listed twice: " + duplicates.subList(0,
          Math.min(10, duplicates.size())));
      int listed = 0;
      for (int i = 0; i < n; i++) {
        if (seen.contains("entry-" + i)) {
          listed++;
        }
      }
      assertEquals(n, listed, "entries missing from the listing");
      assertTrue(seen.stream().allMatch(s -> s.startsWith("entry-") || s.startsWith("churn-")),
          "a name nobody created was listed");
      assertTrue(churned.get() > 0, "the listing ran while the directory changed");
      assertTrue(Files.isRegularFile(dir.resolve("entry-" + (n - 1))));
      assertEquals(2, (int) Files.getAttribute(dir, "unix:nlink"), "files do not add links");
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aFileEightTimesTheNodesHeapWritesAndReadsBackWithBoundedMemory() throws Exception {
    // A small heap makes "larger than memory" cheap to test: the node holds a bounded write-back
    // buffer, never the file, and the kernel's page cache is bypassed (direct_io).
    cluster = LocalCluster.up(tmp, 1, "2G",
        Map.of("ETCFS_NODE_JAVA_OPTS", "-Xmx128m -XX:MaxDirectMemorySize=64m"));
    long pid = nodePid();
    Path f = cluster.mount(1).resolve("large");
    long size = 1L << 30;
    byte[] block = new byte[1 << 20];
    MessageDigest written = MessageDigest.getInstance("SHA-256");
    Random random = new Random(42);
    try (OutputStream out = Files.newOutputStream(f)) {
      for (long at = 0; at < size; at += block.length) {
        random.nextBytes(block);
        written.update(block);
        out.write(block);
      }
    }
    MessageDigest read = MessageDigest.getInstance("SHA-256");
    try (InputStream in = Files.newInputStream(f)) {
      int got;
      while ((got = in.read(block)) > 0) {
        read.update(block, 0, got);
      }
    }
    assertEquals(size, Files.size(f));
    assertTrue(MessageDigest.isEqual(written.digest(), read.digest()),
        "the file read back differs from what was written");
    long peakKb = peakRssKb(pid);
    System.out.printf("ScaleIT: node peak resident memory %d MiB for a %d MiB file%n",
        peakKb / 1024, size >> 20);
    assertTrue(peakKb * 1024 < size / 2, "the node's peak resident memory (" + peakKb
        + " KiB) grew with the file: it must not hold file data beyond its bounded buffer");
  }

  private long nodePid() throws Exception {
    Distribution.Result st = cluster.etcfs("status", "--dir", cluster.dir().toString());
    for (String line : st.out().split("\n")) {
      String[] cols = line.trim().split("\\s+");
      if (cols.length >= 5 && cols[0].equals("node1")) {
        return Long.parseLong(cols[3]);
      }
    }
    throw new AssertionError("no node1 in status: " + st);
  }

  private static long peakRssKb(long pid) throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
      if (line.startsWith("VmHWM:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", ""));
      }
    }
    throw new AssertionError("no VmHWM for pid " + pid);
  }
}

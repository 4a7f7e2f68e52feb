package io.etcfs.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Directory delegation (issue 13): a node that unlinks many names in one directory answers the
 * unlinks at once and commits them in the background under the directory's exclusive lock. On
 * real nodes and mounts: another node sees each unlink as soon as it returned (its look-up or
 * listing recalls the delegation), can create the name again at once, and a node killed in the
 * middle of removing a tree leaves a directory whose every name is whole, and no space lost.
 */
@Timeout(300)
class DelegationIT {
  @TempDir Path tmp;
  LocalCluster cluster;

  @AfterEach
  void down() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void unlinksAnsweredAtOnceAreSeenAtOnceByAnotherNodesListing() throws Exception {
    cluster = LocalCluster.up(tmp.resolve("c"), 2, "1G");
    Path n1 = cluster.mount(1);
    Path n2 = cluster.mount(2);
    Path d1 = Files.createDirectory(n1.resolve("d"));
    Path d2 = n2.resolve("d");
    for (int i = 0; i < 300; i++) {
      Files.writeString(d1.resolve("f" + i), "file " + i + "\n");
    }

    // node1 alone: its unlinks are queued; node2's listing right after the last one shows none
    for (int i = 0; i < 200; i++) {
      Files.delete(d1.resolve("f" + i));
    }
    List<String> left = names(d2);
    assertEquals(100, left.size(), "node2 lists " + left.size() + " names: " + sample(left));
    assertTrue(cluster.counter(n1, "queued_unlinks") >= 150, "node1 queued "
        + cluster.counter(n1, "queued_unlinks") + " of 200 unlinks");

    // and node2 may create every one of those names again at once: nothing of them is left
    for (int i = 0; i < 200; i++) {
      Files.writeString(d2.resolve("f" + i), "again " + i + "\n", StandardOpenOption.CREATE_NEW);
    }
    assertEquals(300, names(d2).size());
    // (Whether another node shows a name for a moment after an unlink returned is the
    // allowance every name change has, the watch's delay, with delegation off as well: the
    // first unlinks above go the synchronous way, so the check comes after the last, queued.)
    assertEquals(0, cluster.counter(n1, "lost_unlinks"));
  }

  /**
   * tar x of symlinks that point upwards: GNU tar creates a placeholder file for each, and at the
   * end unlinks it and makes the symlink under the same name — a burst of unlinks, each followed
   * at once by a create of its name (on the libfuse 2 front end, found by path).
   */
  @Test
  void tarExtractsDelayedSymlinks() throws Exception {
    cluster = LocalCluster.up(tmp.resolve("c"), 2, "1G");
    Path n1 = cluster.mount(1);
    Path src = Files.createDirectories(tmp.resolve("src/inc/sub"));
    for (int i = 0; i < 60; i++) {
      Files.writeString(src.getParent().resolve("h" + i + ".h"), "header " + i + "\n");
      Files.createSymbolicLink(src.resolve("h" + i + ".h"), Path.of("../h" + i + ".h"));
    }
    Path tar = tmp.resolve("src.tar");
    Sh.Out c = Sh.run("tar", "cf", tar.toString(), "-C", tmp.resolve("src").toString(), "inc");
    assertEquals(0, c.exit(), "tar c: " + c);
    Path into = Files.createDirectory(n1.resolve("x"));
    Sh.Out x = Sh.run("tar", "xf", tar.toString(), "-C", into.toString());
    assertEquals(0, x.exit(), "tar x: " + x);
    for (int i = 0; i < 60; i++) {
      assertEquals("header " + i + "\n", Files.readString(into.resolve("inc/sub/h" + i + ".h")));
    }
    Path n2 = cluster.mount(2);
    assertEquals(60, names(n2.resolve("x/inc/sub")).size());
  }

  @Test
  void aNodeKilledWhileRemovingManyFilesLeavesWholeNamesAndNoLostSpace() throws Exception {
    cluster = LocalCluster.up(tmp.resolve("c"), 2, "1G");
    Path n1 = cluster.mount(1);
    Path n2 = cluster.mount(2);
    String etcd = Faults.env(cluster.dir()).get("ETCFS_ETCD");
    long generation = Faults.generation(etcd, "etcfs", "node1");
    long freeBefore = Files.getFileStore(n2).getUnallocatedSpace();
    Path tree = Files.createDirectory(n1.resolve("tree"));
    for (int d = 0; d < 4; d++) {
      Path sub = Files.createDirectory(tree.resolve("s" + d));
      for (int i = 0; i < 250; i++) {
        Files.write(sub.resolve("f" + i), content(d, i));
      }
    }
    killNode1During("node1 removes 400 files", etcd, generation, done -> {
      for (int d = 0; d < 4; d++) {
        for (int i = 0; i < 250; i++) {
          Files.delete(tree.resolve("s" + d).resolve("f" + i));
          done.incrementAndGet();
        }
      }
    });

    // every name node2 lists is a whole file; then node2 removes the rest
    Path tree2 = n2.resolve("tree");
    int seen = 0;
    if (Files.exists(tree2)) {
      for (int d = 0; d < 4; d++) {
        Path sub = tree2.resolve("s" + d);
        if (!Files.exists(sub)) {
          continue;
        }
        for (String name : names(sub)) {
          int i = Integer.parseInt(name.substring(1));
          assertTrue(java.util.Arrays.equals(content(d, i), Files.readAllBytes(sub.resolve(name))),
              sub.resolve(name) + " is not whole");
          seen++;
        }
      }
      Sh.Out out = Sh.run("rm", "-rf", tree2.toString());
      assertEquals(0, out.exit(), "rm -rf on node2: " + out);
    }
    assertTrue(seen < 1000, "node1 removed nothing before it was killed");
    assertFalse(Files.exists(tree2));
    Faults.await("the space of every file is free again", Duration.ofSeconds(60),
        () -> Files.getFileStore(n2).getUnallocatedSpace() == freeBefore);
  }

  /**
   * Creates answered from the queue (a directory node1 made is delegated to it from its mkdir):
   * node2 reads every file, with its bytes, right after node1's last write returned (the look-up
   * recalls the delegation, which commits the creates; the read recalls each file's lock).
   */
  @Test
  void filesCreatedFromTheQueueReadBackAtOnceOnAnotherNode() throws Exception {
    cluster = LocalCluster.up(tmp.resolve("c"), 2, "1G");
    Path n1 = cluster.mount(1);
    Path n2 = cluster.mount(2);
    Path d1 = Files.createDirectory(n1.resolve("new"));
    for (int i = 0; i < 200; i++) {
      Files.write(d1.resolve("f" + i), content(0, i));
    }
    Path d2 = n2.resolve("new");
    for (int i = 0; i < 200; i++) {
      assertTrue(java.util.Arrays.equals(content(0, i), Files.readAllBytes(d2.resolve("f" + i))),
          "f" + i + " on node2");
    }
    assertEquals(200, names(d2).size());
    assertTrue(cluster.counter(n1, "queued_creates") >= 150, "node1 queued "
        + cluster.counter(n1, "queued_creates") + " of 200 creates");
    assertEquals(0, cluster.counter(n1, "lost_creates"));
  }

  /**
   * A node killed while it creates a tree from its queue: what it answered and had not committed
   * is lost (no fsync promised it), but every name node2 lists is its file, whole or empty (its
   * data not committed yet), and once the tree is removed no space stays taken.
   */
  @Test
  void aNodeKilledWhileCreatingManyFilesLeavesWholeOrEmptyFilesAndNoLostSpace()
      throws Exception {
    cluster = LocalCluster.up(tmp.resolve("c"), 2, "1G");
    Path n1 = cluster.mount(1);
    Path n2 = cluster.mount(2);
    String etcd = Faults.env(cluster.dir()).get("ETCFS_ETCD");
    long generation = Faults.generation(etcd, "etcfs", "node1");
    long freeBefore = Files.getFileStore(n2).getUnallocatedSpace();
    Path tree = Files.createDirectory(n1.resolve("tree"));
    int made = killNode1During("node1 creates 400 files", etcd, generation, done -> {
      for (int d = 0; d < 4; d++) {
        Path sub = Files.createDirectory(tree.resolve("s" + d));
        for (int i = 0; i < 250; i++) {
          Files.write(sub.resolve("f" + i), content(d, i));
          done.incrementAndGet();
        }
      }
    });

    Path tree2 = n2.resolve("tree");
    int seen = 0;
    for (int d = 0; d < 4; d++) {
      Path sub = tree2.resolve("s" + d);
      if (!Files.exists(sub)) {
        continue;
      }
      for (String name : names(sub)) {
        int i = Integer.parseInt(name.substring(1));
        byte[] got = Files.readAllBytes(sub.resolve(name));
        assertTrue(got.length == 0 || java.util.Arrays.equals(content(d, i), got),
            sub.resolve(name) + " holds " + got.length + " bytes, neither nothing nor its own");
        seen++;
      }
    }
    assertTrue(seen >= made - 256 * 2, "node2 lists " + seen + " of the " + made
        + " files node1 answered: more lost than two queues hold");
    Sh.Out out = Sh.run("rm", "-rf", tree2.toString());
    assertEquals(0, out.exit(), "rm -rf on node2: " + out);
    Faults.await("the space of every file is free again", Duration.ofSeconds(60),
        () -> Files.getFileStore(n2).getUnallocatedSpace() == freeBefore);
  }

  /** Work on node1's mount that counts each step done; node1 is killed under it. */
  @FunctionalInterface
  private interface Steps {
    void run(java.util.concurrent.atomic.AtomicInteger done) throws IOException;
  }

  /**
   * Runs {@code steps} in a thread; after 400 of them, SIGKILL to node1. Returns the steps that
   * returned, once node1 is recovered and the thread has ended.
   */
  private int killNode1During(String what, String etcd, long generation, Steps steps)
      throws Exception {
    java.util.concurrent.atomic.AtomicInteger done = new java.util.concurrent.atomic.AtomicInteger();
    Thread work = new Thread(() -> {
      try {
        steps.run(done);
      } catch (IOException dead) {
        // node1 is killed under it
      }
    }, "node1 work");
    work.setDaemon(true);
    work.start();
    Faults.await(what, Duration.ofSeconds(60), () -> done.get() >= 400);
    long pid = Faults.nodePid(cluster, 1);
    DeathWatch watch = DeathWatch.start(pid);
    Faults.signal(pid, "KILL");
    assertTrue(watch.awaitDeath(30_000) > 0, "node1 alive 30 s after SIGKILL");
    work.join(30_000);
    Faults.awaitRecovered(etcd, "etcfs", "node1", generation, Duration.ofSeconds(90));
    return done.get();
  }

  private static byte[] content(int d, int i) {
    return ("dir " + d + " file " + i + " ").repeat(200 + i % 50).getBytes(StandardCharsets.UTF_8);
  }

  private static List<String> names(Path dir) throws IOException {
    List<String> out = new ArrayList<>();
    try (Stream<Path> s = Files.list(dir)) {
      s.forEach(p -> out.add(p.getFileName().toString()));
    } catch (NoSuchFileException gone) {
      return List.of();
    }
    return out;
  }

  private static String sample(List<String> names) {
    return names.stream().limit(8).toList() + (names.size() > 8 ? " …" : "");
  }

}

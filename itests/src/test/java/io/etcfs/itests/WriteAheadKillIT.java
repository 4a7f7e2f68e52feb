package io.etcfs.itests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Write early, commit late (issue 13): a node whose writers fill their buffers writes the blocks
 * to the device at once and commits them at the next fsync, close or recall. Killed with such
 * blocks outstanding, it loses only what no fsync promised: what it fsynced reads back whole on
 * the survivor, nothing it never committed shows, and every block it wrote ahead is free again
 * once it is recovered.
 */
@Timeout(300)
class WriteAheadKillIT {
  private static final int MIB = 1 << 20;

  @TempDir Path tmp;
  LocalCluster cluster;

  @AfterEach
  void down() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void aNodeKilledWithBlocksWrittenAheadLosesNoFsyncAndNoSpace() throws Exception {
    // 1 MiB of superblock and heartbeats plus three 64 MiB arenas
    cluster = LocalCluster.up(tmp.resolve("c"), 2, "200M");
    Path n1 = cluster.mount(1);
    Path n2 = cluster.mount(2);
    String etcd = Faults.env(cluster.dir()).get("ETCFS_ETCD");
    long generation = Faults.generation(etcd, "etcfs", "node1");

    write(n1.resolve("kept"), 0, 40, true); // 40 MiB: past a file's 16 MiB buffer, fsynced
    try (FileChannel ahead = FileChannel.open(n1.resolve("ahead"), StandardOpenOption.CREATE,
        StandardOpenOption.WRITE)) {
      ahead.force(true); // the file exists on every node; its data never gets an fsync
      writeInto(ahead, 100, 120);
      Faults.await("node1 writes blocks ahead of their commit", Duration.ofSeconds(60),
          () -> cluster.counter(n1, "written_ahead_blocks") > 40 * MIB / 4096);
      long pid = Faults.nodePid(cluster, 1);
      DeathWatch watch = DeathWatch.start(pid);
      Faults.signal(pid, "KILL");
      assertTrue(watch.awaitDeath(30_000) > 0, "node1 alive 30 s after SIGKILL");
    } catch (IOException e) {
      // the channel's close on a dead mount
    }
    Faults.awaitRecovered(etcd, "etcfs", "node1", generation, Duration.ofSeconds(90));

    verify(n2.resolve("kept"), 0, 40L * MIB);
    long committed = Files.size(n2.resolve("ahead"));
    verify(n2.resolve("ahead"), 100, committed); // what a commit mapped, if any, is right

    // everything but what is committed can be written again on node2
    long filled = fillUntilEnospc(n2.resolve("fill"));
    long expected = 192L * MIB - 40L * MIB - committed;
    assertTrue(filled >= expected - 8L * MIB, "node2 filled " + filled / MIB + " MiB of the "
        + expected / MIB + " MiB neither file references: blocks written ahead are lost");
  }


  /**
   * Overwrites in place: a preallocated file rewritten at random on node1 reads back on node2
   * after each fsync; node1 killed in the middle of an unsynced round leaves each block either
   * as fsynced or as that round wrote it (this file's own bytes, never zeros or another file's),
   * and once node1 is recovered node2 fills the rest of the device without touching a block of
   * the file: no block is given twice.
   */
  @Test
  void aNodeKilledWhileOverwritingInPlaceLosesNoFsyncAndGivesNoBlockTwice() throws Exception {
    cluster = LocalCluster.up(tmp.resolve("c"), 2, "200M");
    Path n1 = cluster.mount(1);
    Path n2 = cluster.mount(2);
    String etcd = Faults.env(cluster.dir()).get("ETCFS_ETCD");
    long generation = Faults.generation(etcd, "etcfs", "node1");
    int blocks = 32 * MIB / BLOCK;
    Path db = n1.resolve("db");
    Sh.run("fallocate", "--length", "32M", db.toString()).ok();
    int[] fsynced = new int[blocks];
    Arrays.fill(fsynced, -1); // preallocated: zeros
    boolean[] pending = new boolean[blocks];
    java.util.Random rnd = new java.util.Random(13);
    FileChannel ch = FileChannel.open(db, StandardOpenOption.WRITE);
    int round = 3;
    try {
      for (int r = 0; r < round; r++) {
        for (int i = 0; i < blocks / 2; i++) {
          int k = rnd.nextInt(blocks);
          ch.write(ByteBuffer.wrap(record(r, k)), (long) k * BLOCK);
          fsynced[k] = r;
        }
        ch.force(false);
        verifyRecords(n2.resolve("db"), fsynced, pending, -1); // node2 reads node1's fsync
      }
      long before = cluster.counter(n1, "overwritten_in_place_blocks");
      assertTrue(before > 0, "node1 overwrote nothing in place");
      for (int i = 0; i < blocks; i++) { // unsynced, past the file's 16 MiB buffer
        int k = rnd.nextInt(blocks);
        ch.write(ByteBuffer.wrap(record(round, k)), (long) k * BLOCK);
        pending[k] = true;
      }
      Faults.await("node1 overwrites unsynced blocks in place", Duration.ofSeconds(60),
          () -> cluster.counter(n1, "overwritten_in_place_blocks") > before + blocks / 4);
      long pid = Faults.nodePid(cluster, 1);
      DeathWatch watch = DeathWatch.start(pid);
      Faults.signal(pid, "KILL");
      assertTrue(watch.awaitDeath(30_000) > 0, "node1 alive 30 s after SIGKILL");
    } finally {
      try {
        ch.close();
      } catch (IOException e) {
        // the close on a dead mount
      }
    }
    Faults.awaitRecovered(etcd, "etcfs", "node1", generation, Duration.ofSeconds(90));
    verifyRecords(n2.resolve("db"), fsynced, pending, round);
    long filled = fillUntilEnospc(n2.resolve("fill"));
    long expected = 192L * MIB - 32L * MIB;
    assertTrue(filled >= expected - 8L * MIB, "node2 filled " + filled / MIB + " MiB of the "
        + expected / MIB + " MiB the file does not reference");
    verifyRecords(n2.resolve("db"), fsynced, pending, round); // the fill took none of its blocks
  }

  private static final int BLOCK = 4096;

  private static byte[] record(int round, int k) {
    byte[] b = new byte[BLOCK];
    Arrays.fill(b, (byte) (round * 31 + k * 7 + 1));
    ByteBuffer.wrap(b).putInt(0x1DB).putInt(round).putInt(k);
    return b;
  }

  private static byte[][] readBlocks(Path f, int blocks) throws IOException {
    byte[] all = Files.readAllBytes(f);
    assertEquals((long) blocks * BLOCK, all.length, f + "'s size");
    byte[][] out = new byte[blocks][];
    for (int k = 0; k < blocks; k++) {
      out[k] = Arrays.copyOfRange(all, k * BLOCK, (k + 1) * BLOCK);
    }
    return out;
  }

  /**
   * Block k of {@code f} is its last fsynced record (zeros if none) or, if {@code pending[k]},
   * the record {@code round} wrote there.
   */
  private static void verifyRecords(Path f, int[] fsynced, boolean[] pending, int round)
      throws IOException {
    byte[][] got = readBlocks(f, fsynced.length);
    for (int k = 0; k < fsynced.length; k++) {
      byte[] synced = fsynced[k] < 0 ? new byte[BLOCK] : record(fsynced[k], k);
      if (Arrays.equals(synced, got[k])) {
        continue;
      }
      assertTrue(pending[k] && Arrays.equals(record(round, k), got[k]), f + ": block " + k
          + " is neither its fsynced record (round " + fsynced[k] + ") nor the unsynced one;"
          + " it starts " + ByteBuffer.wrap(got[k]).getInt() + " "
          + ByteBuffer.wrap(got[k], 4, 8).getInt() + " " + ByteBuffer.wrap(got[k], 8, 4).getInt());
    }
  }

  private static void write(Path f, int seed, int mib, boolean fsync) throws IOException {
    try (FileChannel ch = FileChannel.open(f, StandardOpenOption.CREATE_NEW,
        StandardOpenOption.WRITE)) {
      writeInto(ch, seed, mib);
      if (fsync) {
        ch.force(true);
      }
    }
  }

  private static void writeInto(FileChannel ch, int seed, int mib) throws IOException {
    for (int i = 0; i < mib; i++) {
      ByteBuffer block = ByteBuffer.wrap(stamped(seed, i));
      while (block.hasRemaining()) {
        ch.write(block);
      }
    }
  }

  private static byte[] stamped(int seed, int index) {
    byte[] block = new byte[MIB];
    Arrays.fill(block, (byte) (seed + index * 7 + 1));
    ByteBuffer.wrap(block).putInt(seed).putInt(index);
    return block;
  }

  /** {@code f} is {@code length} bytes of {@link #stamped} MiBs. */
  private static void verify(Path f, int seed, long length) throws IOException {
    assertEquals(length, Files.size(f), f + "'s size");
    try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
      ByteBuffer buf = ByteBuffer.allocate(MIB);
      for (int i = 0; (long) i * MIB < length; i++) {
        int want = (int) Math.min(MIB, length - (long) i * MIB);
        buf.clear().limit(want);
        while (buf.hasRemaining() && ch.read(buf, (long) i * MIB + buf.position()) >= 0) {
          // until the block is in
        }
        assertArrayEquals(Arrays.copyOf(stamped(seed, i), want),
            Arrays.copyOf(buf.array(), want), f + ": MiB " + i + " differs");
      }
    }
  }

  /** Bytes written in 1 MiB writes until one fails, which must be ENOSPC; then fsynced. */
  private static long fillUntilEnospc(Path f) throws IOException {
    long written = 0;
    try (FileChannel ch = FileChannel.open(f, StandardOpenOption.CREATE_NEW,
        StandardOpenOption.WRITE)) {
      for (int i = 0; ; i++) {
        ByteBuffer block = ByteBuffer.wrap(stamped(7, i));
        try {
          while (block.hasRemaining()) {
            written += ch.write(block);
          }
        } catch (IOException e) {
          assertTrue(String.valueOf(e.getMessage()).contains("No space left on device"),
              "expected ENOSPC from write(), got " + e);
          break;
        }
        assertTrue(i < 1024, "wrote 1 GiB to a 200 MiB device without ENOSPC");
      }
    }
    return written;
  }
}

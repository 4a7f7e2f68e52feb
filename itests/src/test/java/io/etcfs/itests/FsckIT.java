package io.etcfs.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.core.format.Superblock;
import io.etcfs.etcd.client.EtcdMetaStore;
import io.etcfs.etcd.client.EtcdSettings;
import io.etcfs.spi.fs.FsRecord;
import io.etcfs.spi.fs.Keyspace;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.Txn;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code etcfs fsck} on a real cluster: a tree written through two nodes' mounts checks clean
 * online; damage of each kind written into etcd directly is found under its kind while the nodes
 * run; {@code --repair} with live members is refused, naming them, and changes nothing; with the
 * nodes stopped it repairs what it claims and the next check is clean; and a node mounted again
 * reads the file that was relinked into lost+found. The failsafe execution {@code shared} runs
 * it again on alloc-shared, whose free map the check compares with the ownership records.
 */
@Timeout(300)
class FsckIT {
  @TempDir Path tmp;
  LocalCluster cluster;
  EtcdMetaStore store;
  Keyspace space;

  @AfterEach
  void stop() throws Exception {
    if (store != null) {
      store.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void findsInjectedDamageOnlineAndRepairsItOffline() throws Exception {
    cluster = LocalCluster.up(tmp.resolve("c"), 2, "1G");
    var env = Faults.env(cluster.dir());
    String etcd = env.get("ETCFS_ETCD");
    space = Keyspace.of(env.get("ETCFS_FS"));
    store = EtcdMetaStore.connect(new EtcdSettings(EtcdSettings.parseEndpoints(etcd), null, null,
        null, null, null, Duration.ofSeconds(10)));
    Path n1 = cluster.mount(1);
    Path n2 = cluster.mount(2);
    Path docs = Files.createDirectories(n1.resolve("docs/deep"));
    byte[] lost = "relinked into lost+found\n".repeat(2000).getBytes(StandardCharsets.UTF_8);
    Files.write(docs.resolve("lost.txt"), lost);
    Files.write(n1.resolve("docs/nlink.txt"), new byte[70_000]);
    Files.write(n2.resolve("orphaned.bin"), new byte[30_000]);
    Files.write(n2.resolve("owned.bin"), new byte[50_000]);
    Files.createLink(n2.resolve("docs/hard"), n2.resolve("owned.bin"));
    Files.createDirectories(n2.resolve("empty"));

    // close does not wait for the commit: the damage below needs every file committed
    Faults.await("every file committed", Duration.ofSeconds(30), () -> committed(4));

    Distribution.Result clean = fsck();
    assertEquals(0, clean.exit(), "a fresh tree, online: " + clean);
    assertTrue(clean.out().contains(": clean"), clean.toString());
    // online while both nodes create, write, rename, link and remove: every revision is whole
    java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
    java.util.concurrent.atomic.AtomicReference<Throwable> failed =
        new java.util.concurrent.atomic.AtomicReference<>();
    java.util.concurrent.atomic.AtomicInteger ops = new java.util.concurrent.atomic.AtomicInteger();
    List<Thread> busy = new java.util.ArrayList<>();
    for (Path mp : List.of(n1, n2)) {
      Path d = Files.createDirectories(mp.resolve("busy-" + mp.getFileName()));
      Thread t = new Thread(() -> churn(d, stop, failed, ops));
      t.start();
      busy.add(t);
    }
    try {
      for (int i = 0; i < 2; i++) {
        Distribution.Result during = fsck();
        assertEquals(0, during.exit(), "online, under changes: " + during);
      }
    } finally {
      stop.set(true);
      for (Thread t : busy) {
        t.join(30_000);
      }
    }
    assertEquals(null, failed.get(), "the writers");
    assertTrue(ops.get() >= 10, "the writers changed the tree during the checks: " + ops);

    Distribution.Result json = fsck("--json");
    assertEquals(0, json.exit(), json.toString());
    assertTrue(json.out().strip().startsWith("{") && json.out().contains("\"clean\":true"),
        json.toString());

    long deep = ino(1, "docs");
    deep = ino(ino(deep, "deep"), "lost.txt");
    long lostIno = deep;
    long nlinkIno = ino(ino(1, "docs"), "nlink.txt");
    long orphanIno = ino(1, "orphaned.bin");
    long ownedIno = ino(1, "owned.bin");
    FsRecord rec = FsRecord.decode(store.get(space.record()).orElseThrow().value());
    long lastArena = rec.arenas() - 1;
    while (store.get(space.bytes("arenas/" + Keyspace.hex(lastArena, 8))).isPresent()) {
      lastArena--; // an arena no node holds: nothing allocates from its blocks meanwhile
    }
    long stray = rec.firstBlock() + (lastArena + 1) * rec.blocksPerArena() - 8;

    // damage of each kind, straight into etcd
    put("d/0000000000000001/" + Keyspace.hex(0x1234) + "/ghost", dirent(0xdeadL, 0100000));
    del(entryKey(ino(1, "docs"), "deep", lostIno, true));
    put("i/" + Keyspace.hex(nlinkIno), withNlink(get("i/" + Keyspace.hex(nlinkIno)), 4));
    del(ownerOf(ownedIno));
    put("blocks/" + Keyspace.hex(stray), bytes(Keyspace.hex(0xbeefL) + ":4"));
    put("locks/" + Keyspace.hex(0xfeedL) + "/4242", bytes("X ghost"));
    put("plocks/" + Keyspace.hex(0xfeedL) + "/ghost/0000000000000001", bytes("pid 1\nW 0 9\n"));
    put("arenas/" + Keyspace.hex(lastArena, 8), bytes("node=ghost\ngeneration=5\nclaimed=1\n"));
    put("x/" + Keyspace.hex(0xbeef0L) + "/user.left", bytes("over"));
    del(entryKey(1, "orphaned.bin", orphanIno, false));
    put("i/" + Keyspace.hex(orphanIno), withNlink(get("i/" + Keyspace.hex(orphanIno)), 0));
    put("orphans/" + Keyspace.hex(orphanIno), bytes("node=ghost\ngeneration=7\nunlinked=1\n"));
    // two inodes on one block: found, never repaired (which is right is a guess), so undone
    String shared = "e/" + Keyspace.hex(orphanIno) + "/" + Keyspace.hex(1000);
    put(shared, get(store.prefix(space.bytes("e/" + Keyspace.hex(nlinkIno) + "/"), 0).kvs()
        .get(0).keyString().substring(space.root().length())));

    Distribution.Result found = fsck();
    assertEquals(1, found.exit(), found.toString());
    for (String kind : List.of("dirent-dangling ", "unreachable inode " + lostIno, "nlink inode "
        + nlinkIno, "owner-missing inode " + ownedIno, "owner-stray ", "lock-dead ",
        "plock-dead ", "arena-dead ", "xattr-no-inode ", "orphan-dead ", "extent-shared ")) {
      assertTrue(found.out().lines().anyMatch(l -> l.startsWith(kind)), kind + " in\n" + found);
    }
    boolean sharedAlloc = rec.allocBackend().equals("shared");
    if (sharedAlloc) {
      // alloc-shared: the stray record's blocks are free in the map
      assertTrue(found.out().lines().anyMatch(l -> l.startsWith("freemap-overlap ")), found
          .toString());
    }
    Distribution.Result asJson = fsck("--json");
    assertEquals(1, asJson.exit(), asJson.toString());
    assertTrue(asJson.out().contains("\"kind\":\"orphan-dead\""), asJson.toString());
    Path alien = alienDevice(rec);
    Distribution.Result sb = fsck("--device", alien.toString());
    assertTrue(sb.out().lines().anyMatch(l -> l.startsWith("superblock-mismatch fs: the"
        + " record's uuid")), sb.toString());
    del(shared);

    List<String> before = faults(fsck());
    Distribution.Result refused = fsck("--repair");
    assertEquals(3, refused.exit(), refused.toString());
    assertEquals(1, refused.errLines().stream().filter(l -> l.startsWith("etcfs: ")).count(),
        refused.toString());
    assertTrue(refused.err().lines().noneMatch(l -> l.startsWith("\tat ")), refused.toString());
    assertTrue(refused.err().contains("node1") && refused.err().contains("node2")
        && refused.err().contains("live members"), refused.toString());
    assertEquals(before, faults(fsck()), "the refused repair changed nothing");

    for (int node = 1; node <= 2; node++) {
      Distribution.Result um = cluster.etcfs("umount", cluster.mount(node).toString());
      assertEquals(0, um.exit(), "umount node" + node + ": " + um);
    }
    Faults.await("no members", Duration.ofSeconds(30),
        () -> store.prefix(space.bytes("members/"), 0).kvs().isEmpty());
    put("ino/next", bytes("3"));

    Distribution.Result repaired = fsck("--repair");
    assertEquals(0, repaired.exit(), repaired.toString());
    for (String did : List.of("made /lost+found", "linked 1 unreachable inode(s) into lost+found",
        "deleted entry ", "set inode " + nlinkIno, "purged orphan inode " + orphanIno,
        "rebuilt ", "deleted claim of arena " + lastArena, "deleted lock key",
        "deleted plock key", "deleted 1 xattr key(s) of missing inode")) {
      assertTrue(repaired.out().contains("repaired: " + did), did + " in\n" + repaired);
    }
    if (sharedAlloc) {
      assertTrue(repaired.out().contains("repaired: dropped the free map"), repaired.toString());
    }
    Distribution.Result after = fsck();
    assertEquals(0, after.exit(), "after the repair: " + after);

    Distribution.Result mounted = Faults.mount(cluster, 1);
    assertEquals(0, mounted.exit(), mounted.toString());
    Path again = cluster.mount(1);
    assertTrue(java.util.Arrays.equals(lost, Files.readAllBytes(again.resolve("lost+found/"
        + lostIno))), "the relinked file reads whole");
    assertEquals(1, (int) Files.getAttribute(again.resolve("docs/nlink.txt"), "unix:nlink"));
    assertTrue(!Files.exists(again.resolve("orphaned.bin")));
  }

  private Distribution.Result fsck(String... more) throws Exception {
    List<String> args = new java.util.ArrayList<>(List.of("fsck", "--dir",
        cluster.dir().toString()));
    args.addAll(List.of(more));
    return cluster.etcfs(args.toArray(new String[0]));
  }

  /** Creates, writes, renames, links and removes files in {@code d} until {@code stop}. */
  private static void churn(Path d, java.util.concurrent.atomic.AtomicBoolean stop,
      java.util.concurrent.atomic.AtomicReference<Throwable> failed,
      java.util.concurrent.atomic.AtomicInteger ops) {
    try {
      for (int i = 0; !stop.get(); i++) {
        Path f = d.resolve("f" + i);
        Files.write(f, new byte[4096 * (1 + i % 5)]);
        Files.createDirectories(d.resolve("sub" + i % 3));
        Files.move(f, d.resolve("sub" + i % 3).resolve("g" + i),
            java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        if (i % 4 == 0) {
          Files.createLink(d.resolve("l" + i), d.resolve("sub" + i % 3).resolve("g" + i));
        }
        if (i >= 6) {
          Files.deleteIfExists(d.resolve("sub" + (i - 6) % 3).resolve("g" + (i - 6)));
          Files.deleteIfExists(d.resolve("l" + (i - 6)));
        }
        ops.incrementAndGet();
      }
    } catch (Throwable t) {
      failed.set(t);
    }
  }

  /** Whether {@code files} inodes reference blocks in ownership records. */
  private boolean committed(int files) {
    return store.prefix(space.bytes("blocks/"), 0).kvs().stream()
        .map(kv -> kv.valueString().split(":")[0]).distinct().count() >= files;
  }

  /** The report's fault lines (not its summary, which names the revision). */
  private static List<String> faults(Distribution.Result r) {
    return r.out().lines().filter(l -> !l.startsWith("fsck:")).toList();
  }

  /** The inode a name in a directory names, from its entry's value (version, ino, type). */
  private long ino(long dir, String name) {
    for (KeyValue kv : store.prefix(space.bytes("d/" + Keyspace.hex(dir) + "/"), 0).kvs()) {
      if (kv.keyString().endsWith("/" + name)) {
        return ByteBuffer.wrap(kv.value(), 1, 8).getLong();
      }
    }
    throw new AssertionError("no entry " + name + " in " + dir);
  }

  private String entryKey(long dir, String name, long ino, boolean viaChild) {
    long d = viaChild ? ino(dir, name) : dir;
    String n = viaChild ? "lost.txt" : name;
    for (KeyValue kv : store.prefix(space.bytes("d/" + Keyspace.hex(d) + "/"), 0).kvs()) {
      if (kv.keyString().endsWith("/" + n)) {
        assertEquals(ino, ByteBuffer.wrap(kv.value(), 1, 8).getLong());
        return kv.keyString().substring(space.root().length());
      }
    }
    throw new AssertionError("no entry " + n);
  }

  private String ownerOf(long ino) {
    for (KeyValue kv : store.prefix(space.bytes("blocks/"), 0).kvs()) {
      if (kv.valueString().startsWith(Keyspace.hex(ino) + ":")) {
        return kv.keyString().substring(space.root().length());
      }
    }
    throw new AssertionError("no ownership record of inode " + ino);
  }

  /** A device image that carries another filesystem's superblock (same geometry). */
  private Path alienDevice(FsRecord r) throws Exception {
    Path p = tmp.resolve("alien.img");
    try (RandomAccessFile f = new RandomAccessFile(p.toFile(), "rw")) {
      f.setLength(r.deviceSize());
      Superblock sb = new Superblock(UUID.randomUUID(), r.blockSize(), r.arenaSize(),
          r.deviceSize(), r.dataStart(), r.name());
      f.write(sb.encode().array());
    }
    return p;
  }

  /** A directory entry's value: version 1, the inode, its file type. */
  private static byte[] dirent(long ino, int type) {
    return ByteBuffer.allocate(13).put((byte) 1).putLong(ino).putInt(type).array();
  }

  /** An inode record with another link count (after version, ino, mode, uid, gid). */
  private static byte[] withNlink(byte[] inode, int nlink) {
    byte[] b = inode.clone();
    ByteBuffer.wrap(b).putInt(21, nlink);
    return b;
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private byte[] get(String rel) {
    return store.get(space.bytes(rel)).orElseThrow(() -> new AssertionError("no " + rel))
        .value();
  }

  private void put(String rel, byte[] value) {
    store.commit(new Txn().then(Op.put(space.bytes(rel), value)));
  }

  private void del(String rel) {
    store.commit(new Txn().then(Op.delete(space.bytes(rel))));
  }
}

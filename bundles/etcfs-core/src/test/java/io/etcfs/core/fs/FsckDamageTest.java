package io.etcfs.core.fs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.core.check.CheckReport;
import io.etcfs.core.check.Finding;
import io.etcfs.core.check.FsChecker;
import io.etcfs.core.check.FsRepair;
import io.etcfs.core.check.FsSnapshot;
import io.etcfs.core.format.FilesystemCheck;
import io.etcfs.core.format.Superblock;
import io.etcfs.core.fs.meta.Codec;
import io.etcfs.core.fs.meta.Inode;
import io.etcfs.spi.alloc.BlockOwner;
import io.etcfs.spi.fs.Keyspace;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.Txn;
import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.OpenFile;
import io.etcfs.spi.vfs.Vfs;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Each kind of damage, injected into the store directly on a tree the engine wrote, is found
 * under its kind; the repairs the check claims fix it (a second check is clean); a repair with
 * live members is refused, naming them, and changes nothing.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FsckDamageTest {
  static final Caller ROOT = Caller.ROOT;

  @TempDir Path dir;
  FsFixture fx;
  Keyspace space;
  long dirA;
  long file;
  long other;

  @BeforeEach
  void tree() throws Exception {
    fx = new FsFixture(dir, 0);
    space = Keyspace.of(FsFixture.FS);
    EtcFs fs = fx.node("n1").fs;
    dirA = fs.mkdir(Vfs.ROOT, "a", 0755, ROOT).ino();
    file = write(fs, dirA, "f", 20_000);
    other = write(fs, Vfs.ROOT, "g", 8_000);
    fs.close();
    // the node leaves: repairs need a stopped cluster
    fx.store.commit(new Txn().then(Op.delete(fx.keys.member("n1"))));
    fx.store.commit(new Txn().then(Op.deletePrefix(Keys.of("/etcfs/t/locks/"))));
    assertTrue(check().clean(), () -> lines(check()));
  }

  static long write(EtcFs fs, long dir, String name, int bytes) throws Exception {
    OpenFile f = fs.create(dir, name, 0644, 2, ROOT);
    f.write(ByteBuffer.wrap(new byte[bytes]), 0);
    f.fsync(false);
    f.release();
    return f.ino();
  }

  @AfterEach
  void close() throws Exception {
    fx.close();
  }

  CheckReport check() {
    return result().report();
  }

  FsChecker.Result result() {
    return FsChecker.check(FsSnapshot.read(fx.store, FsFixture.FS), null, s -> { });
  }

  static String lines(CheckReport r) {
    return String.join("\n", r.findings().stream().map(Finding::line).toList());
  }

  void put(String rel, byte[] value) {
    fx.store.commit(new Txn().then(Op.put(space.bytes(rel), value)));
  }

  void del(String rel) {
    fx.store.commit(new Txn().then(Op.delete(space.bytes(rel))));
  }

  Inode inode(long ino) {
    return Codec.decodeInode(fx.store.get(fx.keys.inode(ino)).orElseThrow().value());
  }

  void putInode(Inode i) {
    fx.store.commit(new Txn().then(Op.put(fx.keys.inode(i.ino()), Codec.inode(i))));
  }

  String ownerKey(long ino) {
    return fx.store.prefix(BlockOwner.prefix(space), 0).kvs().stream()
        .filter(kv -> BlockOwner.decode(space, kv.key(), kv.value()).inode() == ino)
        .findFirst().orElseThrow().keyString().substring(space.root().length());
  }

  /** Finds {@code kind}, repairs, and checks clean after. */
  void findsAndRepairs(String kind) throws Exception {
    CheckReport r = check();
    assertTrue(r.faults().stream().anyMatch(f -> f.kind().equals(kind)), lines(r));
    List<String> did = new ArrayList<>();
    FsRepair.repair(fx.store, result(), did::add);
    assertFalse(did.isEmpty());
    CheckReport after = check();
    assertTrue(after.clean(), () -> "after " + did + ":\n" + lines(after));
  }

  void findsOnly(String kind) {
    CheckReport r = check();
    assertTrue(r.faults().stream().anyMatch(f -> f.kind().equals(kind)), lines(r));
  }

  @Test
  void danglingEntryIsDeleted() throws Exception {
    fx.store.commit(new Txn().then(Op.delete(fx.keys.inode(other))));
    del("e/" + FsKeyHex.h(other) + "/0000000000000000");
    findsAndRepairs("dirent-dangling");
  }

  @Test
  void wrongLinkCountsAreSet() throws Exception {
    putInode(inode(file).withNlink(3));
    putInode(inode(dirA).withNlink(7));
    findsAndRepairs("nlink");
    assertEquals(1, inode(file).nlink());
    assertEquals(2, inode(dirA).nlink());
  }

  @Test
  void aFileWithNoEntryGoesToLostAndFound() throws Exception {
    String key = fx.store.prefix(fx.keys.direntPrefix(dirA), 0).kvs().get(0).keyString();
    fx.store.commit(new Txn().then(Op.delete(Keys.of(key))));
    findsAndRepairs("unreachable");
    long lf = fx.node("n2").fs.lookup(Vfs.ROOT, "lost+found", ROOT).ino();
    assertEquals(file, fx.node("n3").fs.lookup(lf, Long.toString(file), ROOT).ino());
    assertEquals(1, inode(file).nlink());
  }

  @Test
  void aDirectoryWithNoEntryGoesToLostAndFoundWithItsFiles() throws Exception {
    String key = new String(fx.keys.dirent(Vfs.ROOT,
        io.etcfs.core.fs.meta.NameHash.of("a"), "a"), java.nio.charset.StandardCharsets.UTF_8);
    fx.store.commit(new Txn().then(Op.delete(Keys.of(key))));
    putInode(inode(Vfs.ROOT).withNlink(2));
    findsAndRepairs("unreachable");
    assertEquals(inode(Vfs.ROOT).nlink(), 3, "root: lost+found");
  }

  @Test
  void blockCountIsSet() throws Exception {
    putInode(inode(file).withSize(inode(file).size(), 1));
    findsAndRepairs("inode-blocks");
  }

  @Test
  void inodeCounterBehindIsRaised() throws Exception {
    put("ino/next", "2".getBytes());
    findsAndRepairs("ino-next");
  }

  @Test
  void missingOwnershipRecordIsRebuilt() throws Exception {
    del(ownerKey(file));
    findsAndRepairs("owner-missing");
  }

  @Test
  void strayOwnershipRecordIsDropped() throws Exception {
    long start = io.etcfs.core.format.Formatter.DATA_START / 4096 + 3_000;
    put("blocks/" + FsKeyHex.h(start), BlockOwner.of(start, "00000000000000ff:4".getBytes())
        .value());
    findsAndRepairs("owner-stray");
  }

  @Test
  void ownershipRecordOfTheWrongInodeIsRebuilt() throws Exception {
    String k = ownerKey(file);
    String v = fx.store.get(space.bytes(k)).orElseThrow().valueString();
    put(k, (FsKeyHex.h(other) + v.substring(v.indexOf(':'))).getBytes());
    findsAndRepairs("owner-stray");
  }

  @Test
  void keysOfAMissingInodeAreDeleted() throws Exception {
    put("x/00000000000000ee/user.a", new byte[] {1});
    put("f/00000000000000ee", "x".getBytes());
    findsAndRepairs("xattr-no-inode");
  }

  @Test
  void twoInodesOnOneBlockIsFoundNotRepaired() throws Exception {
    String chunk = fx.store.prefix(fx.keys.extentPrefix(file), 0).kvs().get(0).keyString();
    byte[] v = fx.store.get(Keys.of(chunk)).orElseThrow().value();
    fx.store.commit(new Txn().then(Op.put(fx.keys.extentChunk(other, 100), v)));
    findsOnly("extent-shared");
    // the repair fixes what it can around it and leaves the shared blocks' records alone
    FsRepair.repair(fx.store, result(), s -> { });
    CheckReport after = check();
    assertEquals(List.of("extent-shared"), after.faults().stream().map(Finding::kind)
        .toList(), lines(after));
    FsRepair.repair(fx.store, result(), s -> { });
    assertEquals(lines(after), lines(check()), "a second repair changes nothing");
  }

  @Test
  void extentOutsideTheDataAreaIsFound() {
    fx.store.commit(new Txn().then(Op.put(fx.keys.extentChunk(other, 100), Codec.extents(
        List.of(new io.etcfs.core.fs.meta.FileExtent(100, 1L << 40, 1))))));
    findsOnly("extent-outside");
  }

  @Test
  void orphanOfAnIncarnationNobodyRecoversIsPurged() throws Exception {
    String key = new String(fx.keys.dirent(Vfs.ROOT,
        io.etcfs.core.fs.meta.NameHash.of("g"), "g"), java.nio.charset.StandardCharsets.UTF_8);
    fx.store.commit(new Txn().then(Op.delete(Keys.of(key))));
    putInode(inode(other).withNlink(0));
    put("orphans/" + FsKeyHex.h(other), "node=dead\ngeneration=3\nunlinked=1\n".getBytes());
    findsAndRepairs("orphan-dead");
    assertTrue(fx.store.get(fx.keys.inode(other)).isEmpty());
  }

  @Test
  void whatARecoveryWillReleaseIsPendingNotAFault() {
    put("slots/00", "node=dead\n".getBytes());
    long gen = fx.store.get(space.bytes("slots/00")).orElseThrow().createRevision();
    put("arenas/00000000", ("node=dead\ngeneration=" + gen + "\nclaimed=1\n").getBytes());
    CheckReport r = check();
    assertTrue(r.clean(), lines(r));
    assertTrue(r.pending().stream().anyMatch(f -> f.kind().equals("recovery-due")), lines(r));
    assertTrue(r.pending().stream().anyMatch(f -> f.kind().equals("arena-recovery-due")));
  }

  @Test
  void deadKeysAreDropped() throws Exception {
    put("arenas/00000000", "node=gone\ngeneration=5\nclaimed=1\n".getBytes());
    put("locks/" + FsKeyHex.h(file) + "/1234", "X gone".getBytes());
    put("plocks/" + FsKeyHex.h(file) + "/gone/0000000000000001", "pid 1\nW 0 9\n".getBytes());
    findsAndRepairs("arena-dead");
  }

  @Test
  void recordAndSuperblockMustAgree() throws Exception {
    Superblock sb = FilesystemCheck.readSuperblock(dir.resolve("device.img"));
    Superblock other = new Superblock(UUID.randomUUID(), sb.blockSize(), sb.arenaSize(),
        sb.deviceSize(), sb.dataStart(), sb.name());
    assertTrue(FsChecker.check(FsSnapshot.read(fx.store, FsFixture.FS), sb, s -> { }).report()
        .clean());
    CheckReport r = FsChecker.check(FsSnapshot.read(fx.store, FsFixture.FS), other, s -> { })
        .report();
    assertEquals(List.of("superblock-mismatch"), r.faults().stream().map(Finding::kind).toList());
  }

  @Test
  void corruptValuesAreFoundByKind() {
    put("i/00000000000000aa", new byte[] {9, 9});
    put("d/0000000000000001/0000000000000099/x", new byte[] {1});
    CheckReport r = check();
    assertTrue(r.faults().stream().anyMatch(f -> f.kind().equals("inode-corrupt")), lines(r));
    assertTrue(r.faults().stream().anyMatch(f -> f.kind().equals("dirent-corrupt")), lines(r));
  }

  @Test
  void noRecordIsOneFinding() {
    del("fs");
    assertEquals(List.of("record-missing"), check().faults().stream().map(Finding::kind)
        .toList());
  }

  @Test
  void repairWithLiveMembersIsRefusedNamingThemAndChangesNothing() {
    putInode(inode(file).withNlink(5));
    fx.node("alive");
    FsChecker.Result r = result();
    long before = fx.store.prefix(space.bytes(""), 0).revision();
    FsRepair.RepairException e = assertThrows(FsRepair.RepairException.class,
        () -> FsRepair.repair(fx.store, r, s -> { }));
    assertTrue(e.getMessage().contains("alive"), e.getMessage());
    assertEquals(before, fx.store.prefix(space.bytes(""), 0).revision());
  }

  @Test
  void aNodeThatJoinsAfterTheCheckStopsTheRepair() {
    putInode(inode(file).withNlink(5));
    FsChecker.Result r = result();
    // a join puts the lowest free slot in the transaction that makes its member key
    fx.store.commit(new Txn().then(Op.put(space.bytes("slots/00"), "node=late\n".getBytes())));
    assertThrows(FsRepair.RepairException.class, () -> FsRepair.repair(fx.store, r, s -> { }));
    assertEquals(5, inode(file).nlink());
  }

  @Test
  void aDirectorysParentAndAnEntrysTypeAreSet() throws Exception {
    putInode(inode(dirA).withParent(77));
    String key = fx.store.prefix(fx.keys.direntPrefix(dirA), 0).kvs().get(0).keyString();
    fx.store.commit(new Txn().then(Op.put(Keys.of(key),
        Codec.dirent(new Codec.Dirent(file, io.etcfs.spi.vfs.Attr.S_IFDIR)))));
    findsOnly("dir-parent");
    findsAndRepairs("dirent-key");
    assertEquals(Vfs.ROOT, inode(dirA).parent());
  }

  @Test
  void entriesOfAMissingDirectoryAreDeletedAndTheirChildrenRelinked() throws Exception {
    long gone = 0x77;
    String name = "lonely";
    fx.store.commit(new Txn().then(Op.put(fx.keys.dirent(gone,
        io.etcfs.core.fs.meta.NameHash.of(name), name),
        Codec.dirent(new Codec.Dirent(file, io.etcfs.spi.vfs.Attr.S_IFREG)))));
    findsAndRepairs("dirent-no-dir");
  }

  @Test
  void aSecondEntryOfADirectoryAndACycleAreFoundNotRepaired() {
    String name = "again";
    fx.store.commit(new Txn().then(Op.put(fx.keys.dirent(Vfs.ROOT,
        io.etcfs.core.fs.meta.NameHash.of(name), name),
        Codec.dirent(new Codec.Dirent(dirA, io.etcfs.spi.vfs.Attr.S_IFDIR)))));
    findsOnly("dir-multilinked");
    long x = 0x50;
    long y = 0x51;
    for (long[] p : new long[][] {{x, y}, {y, x}}) {
      putInode(new Inode(p[0], io.etcfs.spi.vfs.Attr.S_IFDIR | 0755, 0, 0, 3, 0, 0, 0, p[1], 1,
          1, 1, null));
      fx.store.commit(new Txn().then(Op.put(fx.keys.dirent(p[1],
          io.etcfs.core.fs.meta.NameHash.of("c"), "c"),
          Codec.dirent(new Codec.Dirent(p[0], io.etcfs.spi.vfs.Attr.S_IFDIR)))));
    }
    findsOnly("unreachable-cycle");
  }

  @Test
  void overlappingAndArenaSpanningRecordsAreRebuilt() throws Exception {
    String k = ownerKey(file);
    long start = BlockOwner.startOf(space, space.bytes(k));
    put("blocks/" + FsKeyHex.h(start + 1), BlockOwner.of(start + 1, (FsKeyHex.h(file) + ":1")
        .getBytes()).value());
    findsAndRepairs("owner-overlap");
    // two arenas of half the size, so a record can span them
    var r = io.etcfs.spi.fs.FsRecord.decode(fx.store.get(space.record()).orElseThrow().value());
    put("fs", new io.etcfs.spi.fs.FsRecord(r.uuid(), r.name(), r.blockSize(), r.arenaSize() / 2,
        r.deviceSize(), r.dataStart(), r.arenas() * 2, r.lockBackend(), r.allocBackend(),
        r.formatted()).encode());
    long edge = r.firstBlock() + r.blocksPerArena() / 2 - 1;
    put("blocks/" + FsKeyHex.h(edge), BlockOwner.of(edge, "00000000000000ff:2".getBytes())
        .value());
    findsAndRepairs("owner-spans-arena");
  }

  @Test
  void anOrphanRecordOfAMissingInodeIsDeleted() throws Exception {
    put("orphans/00000000000000ab", "node=n1\ngeneration=1\nunlinked=1\n".getBytes());
    findsAndRepairs("orphan-no-inode");
  }

  @Test
  void aLockUnderALeaseOfANodeThatLeftIsPending() {
    long lease = fx.store.grantLease(java.time.Duration.ofSeconds(30));
    fx.store.commit(new Txn().then(Op.put(space.bytes("locks/" + FsKeyHex.h(file) + "/1"),
        "S gone".getBytes(), lease)));
    CheckReport r = check();
    assertTrue(r.clean(), lines(r));
    assertTrue(r.pending().stream().anyMatch(f -> f.kind().equals("lock-expiring")), lines(r));
  }

  @Test
  void aCorruptRecordIsOneFinding() {
    put("fs", "uuid=nope".getBytes());
    assertEquals(List.of("record-corrupt"), check().faults().stream().map(Finding::kind)
        .toList());
  }

  /** The record as alloc-shared, and a free map that is exactly the data area less blocks/. */
  void sharedWithFreeMap() {
    var r = io.etcfs.spi.fs.FsRecord.decode(fx.store.get(space.record()).orElseThrow().value());
    put("fs", new io.etcfs.spi.fs.FsRecord(r.uuid(), r.name(), r.blockSize(), r.arenaSize(),
        r.deviceSize(), r.dataStart(), r.arenas(), r.lockBackend(), "shared", r.formatted())
        .encode());
    long at = r.firstBlock();
    for (var kv : fx.store.prefix(BlockOwner.prefix(space), 0).kvs()) {
      BlockOwner o = BlockOwner.decode(space, kv.key(), kv.value());
      if (o.start() > at) {
        put("freemap/f/" + FsKeyHex.h(at), Long.toString(o.start() - at).getBytes());
      }
      at = o.end();
    }
    long end = r.firstBlock() + r.arenas() * r.blocksPerArena();
    put("freemap/f/" + FsKeyHex.h(at), Long.toString(end - at).getBytes());
    put("freemap/v", "1".getBytes());
  }

  @Test
  void aSharedFreeMapThatAddsUpIsClean() {
    sharedWithFreeMap();
    assertTrue(check().clean(), lines(check()));
  }

  @Test
  void aFreeExtentOverOwnedBlocksDropsTheFreeMap() throws Exception {
    sharedWithFreeMap();
    long start = BlockOwner.startOf(space, space.bytes(ownerKey(file)));
    put("freemap/f/" + FsKeyHex.h(start), "1".getBytes());
    findsAndRepairs("freemap-overlap");
    assertTrue(fx.store.prefix(space.bytes("freemap/"), 0).kvs().isEmpty());
  }

  @Test
  void leakedBlocksDropTheFreeMap() throws Exception {
    sharedWithFreeMap();
    var f = fx.store.prefix(space.bytes("freemap/f/"), 0).kvs();
    fx.store.commit(new Txn().then(Op.delete(f.get(f.size() - 1).key())));
    findsAndRepairs("freemap-leak");
  }

  @Test
  void aReservationOfADeadNodeIsPendingWhileItsSlotIsHeldElseDropsTheMap() throws Exception {
    sharedWithFreeMap();
    var f = fx.store.prefix(space.bytes("freemap/f/"), 0).kvs().get(0);
    String rel = f.keyString().substring(space.root().length());
    long at = Long.parseUnsignedLong(rel.substring("freemap/f/".length()), 16);
    fx.store.commit(new Txn().then(Op.delete(f.key())));
    put("slots/00", "node=dead\n".getBytes());
    long gen = fx.store.get(space.bytes("slots/00")).orElseThrow().createRevision();
    put("freemap/r/" + FsKeyHex.h(at), ("dead " + FsKeyHex.h(gen) + " " + f.valueString())
        .getBytes());
    CheckReport pending = check();
    assertTrue(pending.clean(), lines(pending));
    assertTrue(pending.pending().stream()
        .anyMatch(x -> x.kind().equals("freemap-reservation-recovery-due")), lines(pending));
    del("slots/00");
    findsAndRepairs("freemap-reservation-dead");
  }

  @Test
  void aLargeOrphanIsPurgedInTransactionsEtcdTakes() throws Exception {
    long x = 0x90;
    long base = io.etcfs.core.format.Formatter.DATA_START / 4096 + 2_000;
    int n = 150;
    putInode(new Inode(x, io.etcfs.spi.vfs.Attr.S_IFREG | 0644, 0, 0, 0, n * 4096L, 0, n, 0, 1,
        1, 1, null));
    for (int i = 0; i < n; i++) {
      fx.store.commit(new Txn()
          .then(Op.put(fx.keys.extentChunk(x, i), Codec.extents(List.of(
              new io.etcfs.core.fs.meta.FileExtent(i, base + 2L * i, 1)))))
          .then(Op.put(BlockOwner.key(space, base + 2L * i),
              new BlockOwner(base + 2L * i, 1, x).value())));
    }
    put("orphans/" + FsKeyHex.h(x), "node=ghost\ngeneration=9\nunlinked=1\n".getBytes());
    put("ino/next", Long.toString(x + 1).getBytes());
    CheckReport r = check();
    assertEquals(List.of("orphan-dead"), r.faults().stream().map(Finding::kind).toList(),
        lines(r));
    List<String> did = new ArrayList<>();
    FsRepair.repair(fx.store, result(), did::add);
    assertTrue(did.size() >= 4, did.toString());
    assertTrue(check().clean(), lines(check()));
    assertTrue(fx.store.prefix(fx.keys.extentPrefix(x), 0).kvs().isEmpty());
    assertTrue(fx.store.get(fx.keys.inode(x)).isEmpty());
  }

  /** Hex as keys spell numbers. */
  static final class FsKeyHex {
    static String h(long v) {
      return Keyspace.hex(v);
    }
  }
}

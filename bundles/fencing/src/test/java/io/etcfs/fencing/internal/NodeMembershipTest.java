package io.etcfs.fencing.internal;

import io.etcfs.testing.ComponentConfigs;
import java.util.Map;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.MetaStoreException;
import java.io.IOException;
import java.io.StringReader;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(20)
class NodeMembershipTest {
  private static final byte[] KEY = Keys.of("/etcfs/fs1/members/n1");
  private final FaultyMetaStore store = new FaultyMetaStore();
  @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir;
  private java.nio.file.Path device;
  private NodeMembership member;

  @org.junit.jupiter.api.BeforeEach
  void device() throws IOException {
    device = image(dir);
  }

  @AfterEach
  void leave() {
    if (member != null) {
      member.leave();
    }
    store.close();
  }

  @Test
  void joinsUnderALeaseWithTheKeysCreateRevisionAsGeneration() throws IOException {
    member = join("n1", 10);
    KeyValue kv = store.get(KEY).orElseThrow();
    assertArrayEquals(KEY, member.memberKey());
    assertEquals(kv.createRevision(), member.generation());
    assertEquals(member.lease(), kv.lease());
    assertFalse(member.isFenced());
    Properties record = new Properties();
    record.load(new StringReader(kv.valueString()));
    assertEquals("host-a", record.getProperty("host"));
    assertEquals(Long.toString(ProcessHandle.current().pid()), record.getProperty("pid"));
    assertEquals("/mnt/etc fs", record.getProperty("mountpoint"));
    assertEquals("10", record.getProperty("leaseTtl"));
    assertTrue(record.containsKey("joined"));
  }

  @Test
  void refusesANameALiveMemberHoldsAndGivesBackItsLease() {
    member = join("n1", 10);
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> join("n1", 10));
    assertEquals("node name n1 is already a member of fs1", e.getMessage());
    assertEquals(Set.of(member.lease()), store.grantedLeases());
  }

  @Test
  void leavingRevokesTheLeaseWhichDeletesTheKey() throws Exception {
    NodeMembership left = join("n1", 10);
    left.leave();
    assertFalse(store.get(KEY).isPresent());
    assertTrue(store.grantedLeases().isEmpty());
    assertTrue(left.isFenced());
    left.done().toCompletableFuture().get(1, TimeUnit.SECONDS);
  }

  @Test
  void renewsEveryThirdOfTheTtl() throws InterruptedException {
    member = join("n1", 1);
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (store.keepAlives() < 4 && System.nanoTime() < until) {
      Thread.sleep(20);
    }
    assertTrue(store.keepAlives() >= 4, "keep-alives sent: " + store.keepAlives());
    assertFalse(member.isFenced());
  }

  @Test
  void fencesItselfWhenTheStoreNoLongerKnowsTheLease() throws Exception {
    member = join("n1", 3);
    store.expireLease(member.lease());
    member.done().toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertTrue(member.isFenced());
  }

  @Test
  void fencesItselfAtItsOwnDeadlineWhenRenewalsFail() throws Exception {
    store.answerKeepAlives(lease -> {
      throw new MetaStoreException(MetaStoreException.Kind.UNAVAILABLE, "etcd is away");
    });
    long start = System.nanoTime();
    member = join("n1", 1);
    member.done().toCompletableFuture().get(5, TimeUnit.SECONDS);
    assertTrue(member.isFenced());
    assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(990),
        "fenced before the lease could have expired");
    assertTrue(store.keepAlives() >= 2, "retried: " + store.keepAlives());
  }

  @Test
  void fencesItselfOnTimeWhileAKeepAliveHangs() throws Exception {
    store.answerKeepAlives(lease -> {
      sleep(8_000);
      return 1;
    });
    member = join("n1", 1);
    member.done().toCompletableFuture().get(3, TimeUnit.SECONDS);
    assertTrue(member.isFenced());
  }

  @Test
  void takesAFreeHeartbeatSlotWhoseCreateRevisionIsTheGeneration() throws Exception {
    member = join("n1", 10);
    NodeMembership second = join("n2", 10);
    try {
      KeyValue slot0 = store.get(Keys.of("/etcfs/fs1/slots/00")).orElseThrow();
      KeyValue slot1 = store.get(Keys.of("/etcfs/fs1/slots/01")).orElseThrow();
      assertEquals(member.generation(), slot0.createRevision());
      assertEquals(second.generation(), slot1.createRevision());
      assertEquals("node=n2\n", slot1.valueString());
      assertEquals(0, slot0.lease(), "a slot outlives its node's lease until recovery");
    } finally {
      second.leave();
    }
    assertFalse(store.get(Keys.of("/etcfs/fs1/slots/01")).isPresent(), "a clean leave frees it");
  }

  @Test
  void beatsInItsSlotAndSaysLeftOnALeave() throws Exception {
    member = join("n1", 10);
    try (HeartbeatDevice reader = HeartbeatDevice.open(device)) {
      Beat first = reader.read(0).orElseThrow();
      assertEquals(Beat.LIVE, first.state());
      assertEquals(member.generation(), first.generation());
      assertEquals("n1", first.node());
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      while (reader.read(0).orElseThrow().counter() == first.counter()
          && System.nanoTime() < until) {
        Thread.sleep(20);
      }
      assertTrue(reader.read(0).orElseThrow().counter() > first.counter(), "no second beat");
      member.leave();
      member = null;
      Beat last = reader.read(0).orElseThrow();
      assertEquals(Beat.LEFT, last.state());
    }
  }

  @Test
  void aFencedNodeSaysSoInItsSlotAndStopsBeating() throws Exception {
    member = join("n1", 1);
    store.answerKeepAlives(lease -> {
      throw new MetaStoreException(MetaStoreException.Kind.UNAVAILABLE, "etcd unreachable");
    });
    member.done().toCompletableFuture().get(5, TimeUnit.SECONDS);
    try (HeartbeatDevice reader = HeartbeatDevice.open(device)) {
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      while (reader.read(0).orElseThrow().state() != Beat.FENCED && System.nanoTime() < until) {
        Thread.sleep(10);
      }
      Beat fenced = reader.read(0).orElseThrow();
      assertEquals(Beat.FENCED, fenced.state());
      Thread.sleep(250); // longer than two beat periods of this test (100 ms)
      assertEquals(fenced, reader.read(0).orElseThrow(), "beat after the fence");
    }
  }

  @Test
  void refusesToJoinWhenEverySlotIsHeld() {
    for (int i = 0; i < io.etcfs.spi.blockdev.DeviceLayout.HEARTBEAT_SLOTS; i++) {
      store.commit(new io.etcfs.spi.meta.Txn().then(io.etcfs.spi.meta.Op.put(
          Keys.of("/etcfs/fs1/slots/" + String.format("%02x", i)), "node=x\n".getBytes())));
    }
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> join("n1", 10));
    assertTrue(e.getMessage().startsWith("n1 cannot join fs1: all 255 device heartbeat slots"),
        e.getMessage());
    assertFalse(store.get(KEY).isPresent());
    assertTrue(store.grantedLeases().isEmpty(), "lease given back");
  }

  @Test
  void aFenceAgentThatCannotRegisterRefusesTheJoinAndLeavesNothing() {
    io.etcfs.spi.fencing.FenceAgent refusing = new io.etcfs.spi.fencing.FenceAgent() {
      @Override
      public String name() {
        return "none";
      }

      @Override
      public void fence(String node, long generation, java.time.Duration timeout) {}

      @Override
      public void register(String node, long generation, java.time.Duration timeout)
          throws io.etcfs.spi.fencing.FenceException {
        throw new io.etcfs.spi.fencing.FenceException("no reservation support on this device");
      }
    };
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> new NodeMembership(store, refusing, config("fs1", "n1", 10, device)));
    assertEquals("n1 cannot join fs1: fence agent none: no reservation support on this device",
        e.getMessage());
    assertFalse(store.get(KEY).isPresent());
    assertFalse(store.get(Keys.of("/etcfs/fs1/slots/00")).isPresent());
    assertTrue(store.grantedLeases().isEmpty());
  }

  @Test
  void refusesAMissingDevice() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> new NodeMembership(store, new NoneFenceAgent(), config("fs1", "n1", 10, "")));
    assertEquals("io.etcfs.fencing: device is not set", e.getMessage());
  }

  private NodeMembership join(String node, int ttl) {
    return new NodeMembership(store, new NoneFenceAgent(), config("fs1", node, ttl, device));
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  static NodeMembership.Config config(String fs, String node, int ttl, Object device) {
    return ComponentConfigs.of(NodeMembership.Config.class, Map.of("fsName", fs, "nodeName", node,
        "leaseTtlSeconds", ttl, "mountpoint", "/mnt/etc fs", "host", "host-a",
        "device", device.toString(), "heartbeatMillis", 100));
  }

  /** A device image with room for the superblock and every heartbeat slot. */
  static java.nio.file.Path image(java.nio.file.Path dir) throws IOException {
    java.nio.file.Path p = dir.resolve("device.img");
    try (java.io.RandomAccessFile f = new java.io.RandomAccessFile(p.toFile(), "rw")) {
      f.setLength(io.etcfs.spi.blockdev.DeviceLayout.DATA_START);
    }
    return p;
  }
}

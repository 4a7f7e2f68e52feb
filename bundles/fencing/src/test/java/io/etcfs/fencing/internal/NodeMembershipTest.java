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
  private NodeMembership member;

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

  private NodeMembership join(String node, int ttl) {
    return new NodeMembership(store, config("fs1", node, ttl));
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  static NodeMembership.Config config(String fs, String node, int ttl) {
    return ComponentConfigs.of(NodeMembership.Config.class, Map.of("fsName", fs, "nodeName", node,
        "leaseTtlSeconds", ttl, "mountpoint", "/mnt/etc fs", "host", "host-a"));
  }
}

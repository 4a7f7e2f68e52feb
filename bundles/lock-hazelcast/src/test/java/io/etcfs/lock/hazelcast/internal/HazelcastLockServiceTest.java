package io.etcfs.lock.hazelcast.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.core.HazelcastInstance;
import io.etcfs.spi.fs.Keyspace;
import io.etcfs.testing.ComponentConfigs;
import io.etcfs.testing.MemoryMetaStore;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class HazelcastLockServiceTest {
  private final MemoryMetaStore store = new MemoryMetaStore();

  @AfterEach
  void close() {
    store.close();
  }

  @Test
  void configuresOneClusterPerFilesystemFoundThroughEtcdOnly() {
    Peers peers = Peers.register(store, Keyspace.of("fs1"), "n1", "127.0.0.1", 5702);
    try {
      Config config = HazelcastMember.config("fs1", "n1", "127.0.0.1", 5702, peers.discovery());
      JoinConfig join = config.getNetworkConfig().getJoin();
      assertEquals("etcfs-fs1", config.getClusterName());
      assertEquals(5702, config.getNetworkConfig().getPort());
      assertFalse(config.getNetworkConfig().isPortAutoIncrement());
      assertFalse(join.getMulticastConfig().isEnabled());
      assertFalse(join.getTcpIpConfig().isEnabled());
      assertEquals(1, join.getDiscoveryConfig().getDiscoveryStrategyConfigs().size());
      assertEquals(List.of("127.0.0.1:5702"), peers.addresses());
      assertEquals("127.0.0.1:5702", store.get(Peers.key(Keyspace.of("fs1"), "n1")).get()
          .valueString(), "registered under the filesystem's keys");
    } finally {
      peers.close();
    }
    assertEquals(List.of(), peers.addresses(), "a clean leave takes the address out");
  }

  @Test
  void refusesBadSettingsBeforeStartingAnything() {
    IllegalArgumentException port = assertThrows(IllegalArgumentException.class,
        () -> new HazelcastLockService(store, config("n1", Map.of("port", 70000))));
    assertEquals("io.etcfs.lock.hazelcast: port 70000 is not a TCP port", port.getMessage());
    IllegalArgumentException ttl = assertThrows(IllegalArgumentException.class,
        () -> new HazelcastLockService(store, config("n1", Map.of("sessionTtlSeconds", 0))));
    assertTrue(ttl.getMessage().startsWith("io.etcfs.lock.hazelcast: sessionTtlSeconds"));
    IllegalArgumentException host = assertThrows(IllegalArgumentException.class,
        () -> new HazelcastLockService(store, config("n1", Map.of("address", "no.such.host."))));
    assertTrue(host.getMessage().startsWith("io.etcfs.lock.hazelcast: cannot bind a port on"),
        host.getMessage());
    assertEquals(List.of(), store.prefix(Keyspace.of("fs1").bytes(Keyspace.HAZELCAST), 0).kvs(),
        "nothing registered");
  }

  @Test
  void aMemberThatCannotReachTheRegisteredOthersFailsItsStartWithTheReason() {
    Keyspace space = Keyspace.of("fs1");
    Peers ghost1 = Peers.register(store, space, "ghost1", "127.0.0.1", 9);
    Peers ghost2 = Peers.register(store, space, "ghost2", "127.0.0.1", 7);
    try {
      IllegalStateException e = assertThrows(IllegalStateException.class,
          () -> new HazelcastLockService(store, config("n1", Map.of("startTimeoutSeconds", 2))));
      // Either the join itself outlasts the timeout (Hazelcast still trying the others), or
      // the member joins alone and sees too few: both name the registered members.
      assertTrue(e.getMessage().contains(" sees 1 of the 3 registered members ")
          || e.getMessage().contains("has not joined its cluster within 2 s (registered members:"),
          e.getMessage());
      assertTrue(e.getMessage().contains("127.0.0.1:9") && e.getMessage().contains("127.0.0.1:7"),
          e.getMessage());
      assertEquals(2, store.prefix(space.bytes(Keyspace.HAZELCAST), 0).kvs().size(),
          "the failed node took its own registration back");
    } finally {
      ghost1.close();
      ghost2.close();
    }
  }

  @Test
  void twoNodesFindEachOtherThroughTheStoreAndLeaveCleanly() throws Exception {
    HazelcastLockService a = new HazelcastLockService(store, config("a", Map.of()));
    HazelcastLockService b = new HazelcastLockService(store, config("b", Map.of()));
    try {
      HazelcastInstance ia = a.member().started().toCompletableFuture().get(45, TimeUnit.SECONDS);
      b.member().started().toCompletableFuture().get(45, TimeUnit.SECONDS);
      io.etcfs.testing.Eventually.eventually("both members in one cluster",
          java.time.Duration.ofSeconds(30), () -> ia.getCluster().getMembers().size() == 2);
      assertEquals("etcfs-fs1", ia.getConfig().getClusterName());
      assertEquals("hazelcast", a.backend());
    } finally {
      b.deactivate();
      a.deactivate();
    }
    assertEquals(List.of(), store.prefix(Keyspace.of("fs1").bytes(Keyspace.HAZELCAST), 0).kvs());
  }

  /**
   * Members of live nodes started at once (a live switch to this backend) each return from
   * their start only once they are in one cluster with the members of every live node — not
   * in a cluster of their own that the majority of the members registered so far allowed, whose
   * sessions would be lost when the clusters merge.
   */
  @Test
  void membersStartedAtOnceReturnInOneClusterWithEveryLiveNode() throws Exception {
    for (String n : List.of("a", "b", "c")) {
      store.commit(new io.etcfs.spi.meta.Txn().then(io.etcfs.spi.meta.Op.put(
          Keyspace.of("fs1").bytes(Keyspace.MEMBERS + n), io.etcfs.spi.meta.Keys.of("live"))));
    }
    java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(3);
    List<java.util.concurrent.Future<HazelcastLockService>> started = new java.util.ArrayList<>();
    for (String n : List.of("a", "b", "c")) {
      started.add(pool.submit(() -> {
        HazelcastLockService s = new HazelcastLockService(store, config(n, Map.of()));
        // as the constructor returns: the cluster it found
        sizes.put(n, s.member().started().toCompletableFuture().get().getCluster()
            .getMembers().size());
        return s;
      }));
    }
    List<HazelcastLockService> services = new java.util.ArrayList<>();
    try {
      for (java.util.concurrent.Future<HazelcastLockService> f : started) {
        services.add(f.get(90, TimeUnit.SECONDS));
      }
      assertEquals(Map.of("a", 3, "b", 3, "c", 3), sizes);
    } finally {
      services.forEach(HazelcastLockService::deactivate);
      pool.shutdownNow();
    }
  }

  /**
   * Another node frees a session's locks once it finds the session's entry gone, so the entry
   * must outlive the deadline the session's own node counts to. Hazelcast rounds an entry's
   * expiry down to a whole second; opened half-way through a second, an entry given exactly
   * the TTL is gone about half a second before that deadline.
   */
  @Test
  void aSessionEntryOutlivesTheDeadlineItsNodeCountsTo() throws Exception {
    HazelcastLockService a = new HazelcastLockService(store, config("a", Map.of()));
    try {
      HazelcastInstance hz = a.member().started().toCompletableFuture().get(45, TimeUnit.SECONDS);
      com.hazelcast.map.IMap<Long, String> sessions = hz.getMap(HazelcastLockService.SESSIONS);
      long intoSecond = System.currentTimeMillis() % 1000;
      Thread.sleep((1500 - intoSecond) % 1000);
      HzSession s = HzSession.open(0x5e55L, "a", sessions, java.time.Duration.ofSeconds(2),
          () -> true, ended -> { });
      s.halt(); // no renewal, as a node that stalls at once
      long checks = 0;
      while (!s.isExpired()) {
        assertTrue(sessions.containsKey(0x5e55L),
            "the entry went while its node still counted the session live");
        checks++;
        Thread.sleep(10);
      }
      assertTrue(checks > 50, "checked through the session's life: " + checks);
      io.etcfs.testing.Eventually.eventually("the entry expires after the deadline",
          java.time.Duration.ofSeconds(5), () -> !sessions.containsKey(0x5e55L));
    } finally {
      a.deactivate();
    }
  }

  /**
   * A call of this node that waits for a lock being given back (a recall: another node asked)
   * must not be handed the old grant: the lock is forgotten here only once the map has the
   * release, so the call's request comes after it, queues behind the other node and gets a grant
   * of its own. (The release was sent after the waiters were woken; a waiter's request — one per
   * session — then found the old grant still in the map and returned its token: a lock the core
   * had let go, which it refused for 2 s, and which the map then held for nobody.)
   */
  @Test
  void aCallWaitingForAGivenBackLockGetsANewGrantNotTheOldOne() throws Exception {
    HazelcastLockService a = new HazelcastLockService(store, config("a", Map.of()));
    HazelcastLockService b = new HazelcastLockService(store, config("b", Map.of()));
    java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newCachedThreadPool();
    try {
      HazelcastInstance ia = a.member().started().toCompletableFuture().get(45, TimeUnit.SECONDS);
      b.member().started().toCompletableFuture().get(45, TimeUnit.SECONDS);
      io.etcfs.testing.Eventually.eventually("both members in one cluster",
          java.time.Duration.ofSeconds(30), () -> ia.getCluster().getMembers().size() == 2);
      java.time.Duration wait = java.time.Duration.ofSeconds(20);
      io.etcfs.spi.lock.HeldLock first = a.acquire(7, io.etcfs.spi.lock.LockMode.EXCLUSIVE, wait);

      java.util.concurrent.CountDownLatch recalled = new java.util.concurrent.CountDownLatch(1);
      java.util.concurrent.CountDownLatch handOver = new java.util.concurrent.CountDownLatch(1);
      a.setRecallHandler(new io.etcfs.spi.lock.RecallHandler() {
        @Override
        public void recall(io.etcfs.spi.lock.HeldLock lock, io.etcfs.spi.lock.LockMode wanted) {
          recalled.countDown();
          try {
            handOver.await(20, TimeUnit.SECONDS); // the core flushing: a call may come meanwhile
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
      });
      java.util.concurrent.Future<io.etcfs.spi.lock.HeldLock> other = pool.submit(
          () -> b.acquire(7, io.etcfs.spi.lock.LockMode.EXCLUSIVE, wait));
      assertTrue(recalled.await(20, TimeUnit.SECONDS), "a was asked to give the lock back");
      Thread[] waiter = new Thread[1];
      java.util.concurrent.Future<io.etcfs.spi.lock.HeldLock> again = pool.submit(() -> {
        waiter[0] = Thread.currentThread();
        return a.acquire(7, io.etcfs.spi.lock.LockMode.EXCLUSIVE, wait);
      });
      io.etcfs.testing.Eventually.eventually("a's second call waits for the hand-over",
          java.time.Duration.ofSeconds(10), () -> waiter[0] != null
              && waiter[0].getState() == Thread.State.TIMED_WAITING);
      // before the map hears of the release: a waiter that got in now would find the old grant
      a.beforeReleaseSent = () -> {
        try {
          again.get(1, TimeUnit.SECONDS);
        } catch (Exception e) {
          // still waiting, as it must
        }
      };
      handOver.countDown();
      io.etcfs.spi.lock.HeldLock theirs = other.get(20, TimeUnit.SECONDS);
      b.release(theirs);
      io.etcfs.spi.lock.HeldLock mine = again.get(20, TimeUnit.SECONDS);
      assertTrue(theirs.fencingToken() > first.fencingToken(), theirs + " after " + first);
      assertTrue(mine.fencingToken() > theirs.fencingToken(),
          "a's waiting call got " + mine + "; the lock it gave back was " + first
              + ", b's grant after it " + theirs);
    } finally {
      pool.shutdownNow();
      b.deactivate();
      a.deactivate();
    }
  }

  /**
   * A member registered by a node that is frozen (SIGSTOP, a stalled VM) still accepts TCP
   * connections in its kernel but never answers: members starting together (a switch to this
   * backend) cannot agree on a master while it is among their addresses. Once its registration
   * lapses with its node's lease, they start again on what etcd lists now and form one cluster.
   */
  @Test
  void membersStartingTogetherGetPastAFrozenRegisteredMember() throws Exception {
    Keyspace space = Keyspace.of("fs1");
    try (java.net.ServerSocket frozen = new java.net.ServerSocket(0, 50,
        java.net.InetAddress.getByName("127.0.0.1"))) {
      Peers ghost = Peers.register(store, space, "frozen", "127.0.0.1", frozen.getLocalPort());
      java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors
          .newFixedThreadPool(2);
      List<java.util.concurrent.Future<HazelcastLockService>> started = new java.util.ArrayList<>();
      long t0 = System.nanoTime();
      for (String n : List.of("a", "b")) {
        started.add(pool.submit(() -> new HazelcastLockService(store, config(n, Map.of()))));
      }
      // the frozen node's lease (and with it its registration) runs out a few seconds later
      Thread.sleep(4000);
      ghost.close();
      List<HazelcastLockService> services = new java.util.ArrayList<>();
      try {
        for (java.util.concurrent.Future<HazelcastLockService> f : started) {
          services.add(f.get(60, TimeUnit.SECONDS));
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        for (HazelcastLockService s : services) {
          assertEquals(2, s.member().started().toCompletableFuture().get().getCluster()
              .getMembers().size());
        }
        assertTrue(seconds < 30, "started after " + seconds + " s");
      } finally {
        services.forEach(HazelcastLockService::deactivate);
        pool.shutdownNow();
      }
    }
  }

  private final Map<String, Integer> sizes = new java.util.concurrent.ConcurrentHashMap<>();

  private static HazelcastLockService.Config config(String node, Map<String, Object> more) {
    Map<String, Object> all = new java.util.HashMap<>(
        Map.of("fsName", "fs1", "nodeName", node, "address", "127.0.0.1"));
    all.putAll(more);
    return ComponentConfigs.of(HazelcastLockService.Config.class, all);
  }
}

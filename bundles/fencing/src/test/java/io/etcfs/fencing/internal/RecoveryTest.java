package io.etcfs.fencing.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.spi.fencing.DeadNode;
import io.etcfs.spi.fencing.FenceAgent;
import io.etcfs.spi.fencing.FenceException;
import io.etcfs.spi.fencing.RecoveryParticipant;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.Keys;
import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Recovery of dead incarnations on the in-memory store and a real image file: who is recovered,
 * what each step waits for, what is recorded, and that nothing is recovered twice or too early.
 */
@Timeout(30)
class RecoveryTest {
  private static final Recovery.Timing FAST = new Recovery.Timing(Duration.ofSeconds(2),
      Duration.ofMillis(200), Duration.ofMillis(100), Duration.ofMillis(400), Duration.ofSeconds(20),
      Duration.ofMillis(200));

  private final FaultyMetaStore store = new FaultyMetaStore();
  private final List<NodeMembership> members = new ArrayList<>();
  private final List<HeartbeatDevice> devices = new ArrayList<>();
  private final List<DeadNode> calls = new CopyOnWriteArrayList<>();
  @TempDir Path dir;
  private Path device;

  @BeforeEach
  void device() throws IOException {
    device = NodeMembershipTest.image(dir);
  }

  @AfterEach
  void close() throws IOException {
    for (NodeMembership m : members) {
      if (!m.isFenced()) {
        m.leave();
      }
    }
    for (HeartbeatDevice d : devices) {
      d.close();
    }
    store.close();
  }

  @Test
  void recoversACrashedNodeOnceItsHeartbeatStopped() throws Exception {
    NodeMembership n1 = join("n1");
    NodeMembership n2 = join("n2");
    DeadNode dead = crash(n2);
    long t0 = System.nanoTime();
    assertEquals(List.of(dead), recovery(n1, participants("filesystem", "allocator")).scanOnce());
    assertTrue(System.nanoTime() - t0 >= FAST.heartbeatTimeout().toNanos(),
        "recovered before the heartbeat could be seen to stop");
    assertEquals(List.of(dead, dead), calls, "each participant once");
    assertFalse(store.get(Keys.of("/etcfs/fs1/slots/01")).isPresent(), "slot freed");
    assertFalse(store.get(Keys.of("/etcfs/fs1/recovery/01")).isPresent(), "election key gone");
    Properties record = fence("n2", dead.generation());
    assertEquals("done", record.getProperty("result"));
    assertEquals("n1", record.getProperty("recoveredBy"));
    assertEquals("none ok", record.getProperty("agentResult").replaceAll(" in .*", ""));
    assertTrue(record.getProperty("heartbeat").startsWith("stopped at beat "),
        record.getProperty("heartbeat"));
    assertEquals("ok", record.getProperty("participant.allocator"));
    assertTrue(recovery(n1, participants("filesystem", "allocator")).scanOnce().isEmpty(),
        "nothing left to recover");
  }

  @Test
  void aNodeThatFencedItselfIsRecoveredWithoutWaitingOutItsHeartbeat() throws Exception {
    NodeMembership n1 = join("n1");
    NodeMembership n2 = join("n2", 1);
    store.failKeepAlivesOf(n2.lease());
    n2.done().toCompletableFuture().get(5, TimeUnit.SECONDS);
    awaitBeat(1, Beat.FENCED);
    store.expireLease(n2.lease());
    Recovery.Timing patient = new Recovery.Timing(Duration.ofSeconds(2), Duration.ofMillis(200),
        Duration.ofMillis(100), Duration.ofSeconds(20), Duration.ofSeconds(20), Duration.ZERO);
    long t0 = System.nanoTime();
    List<DeadNode> done = recovery(n1, participants("filesystem", "allocator"), patient).scanOnce();
    assertEquals(List.of(new DeadNode("n2", n2.generation())), done);
    assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(10), "waited out the heartbeat");
    assertTrue(fence("n2", n2.generation()).getProperty("heartbeat").startsWith(
        "node wrote 'fenced'"));
  }

  @Test
  void aNodeStillBeatingOnTheDeviceKeepsItsArenas() throws Exception {
    NodeMembership n1 = join("n1");
    NodeMembership n2 = join("n2");
    DeadNode dead = crash(n2);
    // Someone still beats in n2's slot: a node cut off from etcd that did not fence itself.
    HeartbeatDevice zombie = open();
    Thread beater = new Thread(() -> {
      long beat = 1000;
      while (!Thread.currentThread().isInterrupted()) {
        try {
          zombie.write(1, new Beat(Beat.LIVE, dead.generation(), beat++, 0, "n2"));
          Thread.sleep(50);
        } catch (IOException | InterruptedException e) {
          return;
        }
      }
    });
    beater.start();
    try {
      Recovery.Timing shortGiveUp = new Recovery.Timing(Duration.ofSeconds(2),
          Duration.ofMillis(200), Duration.ofMillis(100), Duration.ofMillis(400),
          Duration.ofSeconds(1), Duration.ZERO);
      Recovery r = recovery(n1, participants("filesystem", "allocator"), shortGiveUp);
      assertTrue(r.scanOnce().isEmpty());
      assertTrue(calls.isEmpty(), "no participant may run while the node beats");
      assertTrue(store.get(Keys.of("/etcfs/fs1/slots/01")).isPresent(), "slot kept");
      Properties record = fence("n2", dead.generation());
      assertTrue(record.getProperty("result").contains("still changes"),
          record.getProperty("result"));
      assertEquals("1", record.getProperty("attempts"));
      long t0 = System.nanoTime();
      assertTrue(r.scanOnce().isEmpty());
      assertTrue(System.nanoTime() - t0 < TimeUnit.MILLISECONDS.toNanos(500),
          "retried at once instead of backing off");
    } finally {
      beater.interrupt();
      beater.join();
    }
  }

  @Test
  void aHangingFenceAgentIsTimedOutAndReported() throws Exception {
    NodeMembership n1 = join("n1");
    DeadNode dead = crash(join("n2"));
    FenceAgent hanging = agent(() -> Thread.sleep(60_000));
    Recovery r = new Recovery(store, new FencingKeys("fs1"), n1, hanging, open(),
        () -> participants("filesystem", "allocator"), Set.of("filesystem", "allocator"),
        new Recovery.Timing(Duration.ofMillis(300), Duration.ofMillis(200),
            Duration.ofMillis(100), Duration.ofMillis(400), Duration.ofSeconds(20), Duration.ZERO));
    long t0 = System.nanoTime();
    assertTrue(r.scanOnce().isEmpty());
    assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(5), "waited for the agent");
    assertEquals("failed: fence agent hanging did not return within 0.3 s",
        fence("n2", dead.generation()).getProperty("result"));
    assertTrue(calls.isEmpty());
    r.stop();
  }

  @Test
  void aFailingFenceAgentStopsRecoveryWithItsMessage() throws Exception {
    NodeMembership n1 = join("n1");
    DeadNode dead = crash(join("n2"));
    FenceAgent failing = agent(() -> {
      throw new FenceException("power switch did not answer");
    });
    Recovery r = new Recovery(store, new FencingKeys("fs1"), n1, failing, open(),
        () -> participants("filesystem", "allocator"), Set.of("filesystem", "allocator"), FAST);
    assertTrue(r.scanOnce().isEmpty());
    assertEquals("failed: fence agent hanging failed: power switch did not answer",
        fence("n2", dead.generation()).getProperty("result"));
    assertTrue(store.get(Keys.of("/etcfs/fs1/slots/01")).isPresent());
    r.stop();
  }

  @Test
  void aMissingParticipantStopsRecoveryBeforeAnyTakesPart() throws Exception {
    NodeMembership n1 = join("n1");
    DeadNode dead = crash(join("n2"));
    assertTrue(recovery(n1, participants("filesystem")).scanOnce().isEmpty());
    assertTrue(calls.isEmpty());
    assertEquals("failed: recovery participant(s) [allocator] not available on n1",
        fence("n2", dead.generation()).getProperty("result"));
  }

  @Test
  void twoSurvivorsRecoverADeadNodeOnlyOnce() throws Exception {
    NodeMembership n1 = join("n1");
    NodeMembership n3 = join("n3");
    DeadNode dead = crash(join("n2"));
    Recovery r1 = recovery(n1, participants("filesystem", "allocator"));
    Recovery r3 = recovery(n3, participants("filesystem", "allocator"));
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      CountDownLatch go = new CountDownLatch(1);
      Future<List<DeadNode>> a = pool.submit(() -> {
        go.await();
        return r1.scanOnce();
      });
      Future<List<DeadNode>> b = pool.submit(() -> {
        go.await();
        return r3.scanOnce();
      });
      go.countDown();
      List<DeadNode> all = new ArrayList<>(a.get(20, TimeUnit.SECONDS));
      all.addAll(b.get(20, TimeUnit.SECONDS));
      assertEquals(List.of(dead), all);
      assertEquals(2, calls.size(), "two participants, once each");
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aCleanLeaveLeavesNothingToRecover() throws Exception {
    NodeMembership n1 = join("n1");
    NodeMembership n2 = join("n2");
    n2.leave();
    members.remove(n2);
    assertTrue(recovery(n1, participants("filesystem", "allocator")).scanOnce().isEmpty());
    assertTrue(store.prefix(Keys.of("/etcfs/fs1/fences/"), 0).kvs().isEmpty());
  }

  @Test
  void aNodeBackUnderItsOldNameIsNotTakenForItsDeadIncarnation() throws Exception {
    NodeMembership n1 = join("n1");
    DeadNode old = crash(join("n2"));
    NodeMembership again = join("n2");
    assertEquals(List.of(old), recovery(n1, participants("filesystem", "allocator")).scanOnce());
    KeyValue slot = store.get(Keys.of("/etcfs/fs1/slots/02")).orElseThrow();
    assertEquals(again.generation(), slot.createRevision(), "the new incarnation keeps its slot");
    assertFalse(again.isFenced());
  }

  // ---- helpers ----

  private NodeMembership join(String node) {
    return join(node, 10);
  }

  private NodeMembership join(String node, int ttl) {
    NodeMembership m = new NodeMembership(store, new NoneFenceAgent(),
        NodeMembershipTest.config("fs1", node, ttl, device));
    members.add(m);
    return m;
  }

  /** Kills the incarnation: no more keep-alives or beats, and its lease expires at once. */
  private DeadNode crash(NodeMembership m) {
    m.crash();
    store.expireLease(m.lease());
    return new DeadNode(m.nodeName(), m.generation());
  }

  private Recovery recovery(NodeMembership by, List<RecoveryParticipant> present) throws IOException {
    return recovery(by, present, FAST);
  }

  private Recovery recovery(NodeMembership by, List<RecoveryParticipant> present,
      Recovery.Timing timing) throws IOException {
    return new Recovery(store, new FencingKeys("fs1"), by, new NoneFenceAgent(), open(),
        () -> present, Set.of("filesystem", "allocator"), timing);
  }

  private HeartbeatDevice open() throws IOException {
    HeartbeatDevice d = HeartbeatDevice.open(device);
    devices.add(d);
    return d;
  }

  private List<RecoveryParticipant> participants(String... names) {
    List<RecoveryParticipant> list = new ArrayList<>();
    for (String name : names) {
      list.add(new RecoveryParticipant() {
        @Override
        public String name() {
          return name;
        }

        @Override
        public String recover(DeadNode dead) {
          calls.add(dead);
          return "ok";
        }
      });
    }
    return list;
  }

  interface Body {
    void run() throws Exception;
  }

  private static FenceAgent agent(Body body) {
    return new FenceAgent() {
      @Override
      public String name() {
        return "hanging";
      }

      @Override
      public void fence(String node, long generation, Duration timeout) throws FenceException {
        try {
          body.run();
        } catch (FenceException e) {
          throw e;
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new FenceException("interrupted");
        } catch (Exception e) {
          throw new FenceException(e.toString());
        }
      }
    };
  }

  private void awaitBeat(int slot, int state) throws Exception {
    HeartbeatDevice d = open();
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (d.read(slot).map(Beat::state).orElse(0) != state && System.nanoTime() < until) {
      Thread.sleep(10);
    }
    assertEquals(state, d.read(slot).orElseThrow().state());
  }

  private Properties fence(String node, long generation) throws IOException {
    KeyValue kv = store.get(Keys.of("/etcfs/fs1/fences/" + node + "/"
        + String.format("%016x", generation))).orElseThrow(() -> new AssertionError(
            "no fence record for " + node));
    Properties p = new Properties();
    p.load(new StringReader(kv.valueString()));
    return p;
  }
}

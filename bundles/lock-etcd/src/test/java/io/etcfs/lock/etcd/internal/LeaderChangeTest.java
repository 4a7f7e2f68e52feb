package io.etcfs.lock.etcd.internal;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.etcd.client.EtcdMetaStore;
import io.etcfs.etcd.client.EtcdSettings;
import io.etcfs.spi.lock.HeldLock;
import io.etcfs.spi.lock.LockMode;
import io.etcfs.spi.meta.Compare;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.MetaStoreException;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.Txn;
import io.etcfs.testing.EtcdCluster;
import io.etcfs.testing.EtcdExtension;
import io.etcfs.testing.EtcdMembers;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * An etcd leader change while a lock holder commits under its lock: each commit either applies
 * or fails with a clear error within the request timeout, the lock keeps its meaning (its key
 * stands exactly while it is held), and handing it over still works afterwards.
 */
@Timeout(120)
@EtcdMembers(3)
@ExtendWith(EtcdExtension.class)
class LeaderChangeTest {

  @Test
  void commitsUnderALockSurviveALeaderChange(EtcdCluster etcd) throws Exception {
    try (EtcdMetaStore store = EtcdMetaStore.connect(EtcdSettings.of(etcd.endpoints())
        .withRequestTimeout(Duration.ofSeconds(3)))) {
      EtcdLockService a = new EtcdLockService(store, EtcdLockServiceTest.config("lc", "a", 2));
      EtcdLockService b = new EtcdLockService(store, EtcdLockServiceTest.config("lc", "b", 2));
      try {
        HeldLock held = a.acquire(1, LockMode.EXCLUSIVE, Duration.ofSeconds(10));
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger applied = new AtomicInteger();
        AtomicInteger failed = new AtomicInteger();
        Thread writer = new Thread(() -> {
          while (!stop.get()) {
            long t0 = System.nanoTime();
            try {
              Txn txn = new Txn();
              txn.when(Compare.createRevision(HeldKeys.key("lc", held), held.fencingToken()));
              txn.then(Op.put(Keys.of("/lc/counter"), Keys.of("x")));
              if (store.commit(txn).succeeded()) {
                applied.incrementAndGet();
              }
            } catch (MetaStoreException e) {
              failed.incrementAndGet();
            }
            if (System.nanoTime() - t0 > TimeUnit.SECONDS.toNanos(10)) {
              throw new AssertionError("a commit hung through the leader change");
            }
          }
        });
        writer.start();
        awaitCount(applied, 20);
        int leader = leader(etcd);
        etcd.process().stopMember(leader);
        int before = applied.get();
        // Either the lock session rode out the election (commits under the lock apply again)
        // or this node could not prove it alive in time and gave it up (then nothing it commits
        // under the lock applies): never a lock that is used without being held.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (applied.get() < before + 20 && a.session().id() == held.sessionId()) {
          assertTrue(System.nanoTime() < deadline, "neither resumed nor expired");
          Thread.sleep(10);
        }
        stop.set(true);
        writer.join(15_000);
        assertFalse(writer.isAlive());
        boolean expired = a.session().id() != held.sessionId();
        System.out.println("LeaderChangeTest: lock session " + (expired ? "expired" : "survived")
            + "; " + applied.get() + " commits applied, " + failed.get() + " failed cleanly");

        HeldLock taken = b.acquire(1, LockMode.EXCLUSIVE, Duration.ofSeconds(20));
        assertTrue(taken.fencingToken() > held.fencingToken());
        Txn late = new Txn();
        late.when(Compare.createRevision(HeldKeys.key("lc", held), held.fencingToken()));
        late.then(Op.put(Keys.of("/lc/counter"), Keys.of("late")));
        assertFalse(store.commit(late).succeeded(), "the old holder's key is gone");
      } finally {
        a.deactivate();
        b.deactivate();
      }
    }
  }

  private static void awaitCount(AtomicInteger count, int target) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (count.get() < target) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("only " + count.get() + " commits applied, wanted " + target);
      }
      Thread.sleep(10);
    }
  }

  /** The index of the member that leads now, asked through etcdctl. */
  private static int leader(EtcdCluster etcd) throws IOException, InterruptedException {
    List<String> urls = etcd.process().clientUrls();
    for (int i = 0; i < urls.size(); i++) {
      Process p = new ProcessBuilder("etcdctl", "--endpoints", urls.get(i), "endpoint", "status",
          "-w", "fields").redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      p.waitFor(10, TimeUnit.SECONDS);
      String member = field(out, "\"MemberID\"");
      String leader = field(out, "\"Leader\"");
      if (member != null && member.equals(leader)) {
        return i;
      }
    }
    throw new AssertionError("no member says it leads");
  }

  private static String field(String out, String name) {
    for (String line : out.split("\n")) {
      if (line.startsWith(name)) {
        return line.substring(line.indexOf(':') + 1).trim();
      }
    }
    return null;
  }
}

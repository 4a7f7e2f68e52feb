package io.etcfs.lock.etcd.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.spi.lock.HeldLock;
import io.etcfs.spi.lock.LockMode;
import io.etcfs.spi.shell.InodePaths;
import io.etcfs.support.shell.Table;
import io.etcfs.testing.MemoryMetaStore;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(20)
class LockCommandsTest {
  private final MemoryMetaStore store = new MemoryMetaStore();
  private final EtcdLockService n1 = new EtcdLockService(store,
      EtcdLockServiceTest.config("fs1", "n1", 5));
  private final EtcdLockService n2 = new EtcdLockService(store,
      EtcdLockServiceTest.config("fs1", "n2", 5));
  private final LockCommands shell1 = new LockCommands(store, n1);
  private final LockCommands shell2 = new LockCommands(store, n2);

  @AfterEach
  void close() {
    n1.deactivate();
    n2.deactivate();
    store.close();
  }

  @Test
  void showsHeldRecallingAndWaitingLocksOnEachNodeAndEveryKeyWithAll() throws Exception {
    assertTrue(shell1.locks().startsWith("no inode locks on this node\n"), shell1.locks());
    CountDownLatch recalled = new CountDownLatch(1);
    CountDownLatch flushed = new CountDownLatch(1);
    n1.setRecallHandler((lock, wanted) -> {
      recalled.countDown();
      await(flushed);
    });
    HeldLock held = n1.acquire(0x2a, LockMode.EXCLUSIVE, Duration.ofSeconds(5));
    n1.acquire(0x2b, LockMode.SHARED, Duration.ofSeconds(5));
    CompletableFuture<HeldLock> waiter = CompletableFuture.supplyAsync(() -> {
      try {
        return n2.acquire(0x2a, LockMode.SHARED, Duration.ofSeconds(10));
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    assertTrue(recalled.await(5, TimeUnit.SECONDS));

    String[] mine = shell1.locks().split("\n");
    assertEquals("INODE  MODE  STATE      TOKEN  FOR_S  WAITERS  RECALLS  PATH", mine[0]);
    assertTrue(mine[1].matches("   42  X     recalling +" + held.fencingToken()
        + " +\\d+\\.\\d +1 +0  -"), mine[1]);
    assertTrue(mine[2].matches("   43  S     held +\\d+ +\\d+\\.\\d +0 +0  -"), mine[2]);
    assertEquals("recalls served by this node: 0", mine[3]);
    // n1's two requests, each with its queue read back; none of them a get
    assertTrue(mine[4].matches(
        "etcd round trips: 0 reads, \\d+ range reads, [2-9]\\d* transactions"), mine[4]);
    assertEquals("TOKEN: fencing token; FOR_S: seconds held or awaited", mine[5]);
    assertEquals("RECALLS: served per inode, counted for the 4096 inodes recalled last",
        mine[6]);
    for (String line : mine) {
      assertTrue(line.length() <= Table.WIDTH, line);
    }
    String[] theirs = shell2.locks().split("\n");
    assertTrue(theirs[1].matches("   42  S     waiting +\\d+ +\\d+\\.\\d +- +0  -"),
        theirs[1]);

    String[] all = shell2.locks("--all").split("\n");
    assertTrue(all[0].matches("INODE  MODE  STATE   NODE  TOKEN  SESSION +PATH"), all[0]);
    assertTrue(all[1].matches("   42  X     held    n1 +" + held.fencingToken() + "  "
        + Long.toHexString(held.sessionId()) + " +-"), all[1]);
    assertTrue(all[2].matches("   42  S     queued  n2 +\\d+  [0-9a-f]+ +-"), all[2]);
    assertTrue(all[3].startsWith("   43  S     held    n1"), all[3]);
    assertEquals(4, all.length);
    for (String line : all) {
      assertTrue(line.length() <= Table.WIDTH, line);
    }

    flushed.countDown();
    waiter.get(10, TimeUnit.SECONDS);
    assertTrue(shell1.locks().contains("recalls served by this node: 1\n"), shell1.locks());
    assertEquals(1, n1.recallsServed(0x2a));
    assertEquals(0, n1.recallsServed(0x2b));
    n1.acquire(0x2a, LockMode.SHARED, Duration.ofSeconds(5));
    assertTrue(shell1.locks().matches("(?s).*\n   42  S     held +\\d+ +\\d+\\.\\d +0 +1  -\n.*"),
        shell1.locks());
  }

  @Test
  void jsonHasTheSameRowsAndBadInputIsOneLine() throws Exception {
    HeldLock held = n1.acquire(0x10, LockMode.EXCLUSIVE, Duration.ofSeconds(5));
    String json = shell1.locks("--all", "--json");
    assertEquals("[\n  {\"inode\": 16, \"mode\": \"X\", \"state\": \"held\", \"node\": \"n1\", "
        + "\"token\": " + held.fencingToken() + ", \"session\": \""
        + Long.toHexString(held.sessionId()) + "\", \"path\": null}\n]", json);
    assertTrue(shell1.locks("--json").matches("(?s)\\[\n  \\{\"inode\": 16, \"mode\": \"X\", "
        + "\"state\": \"held\", \"token\": \\d+, \"for_s\": [0-9.]+, \"waiters\": 0, "
        + "\"recalls\": 0, \"path\": null\\}\n]"),
        shell1.locks("--json"));
    assertEquals("locks: unknown option --mine (usage: locks [--all] [--json])",
        assertThrows(IllegalArgumentException.class, () -> shell1.locks("--mine")).getMessage());
    assertEquals("locks: expected no operands, got 1 (usage: locks [--all] [--json])",
        assertThrows(IllegalArgumentException.class, () -> shell1.locks("17")).getMessage());
  }

  @Test
  void pathsComeFromTheCoreWhileItIsThereAndAFailingLookupIsADash() throws Exception {
    n1.acquire(0x10, LockMode.EXCLUSIVE, Duration.ofSeconds(5));
    n1.acquire(0x11, LockMode.SHARED, Duration.ofSeconds(5));
    InodePaths core = ino -> {
      if (ino == 0x11) {
        throw new IllegalStateException("store down");
      }
      return Optional.of("/dir/file");
    };
    shell1.bindInodePaths(core);
    String[] mine = shell1.locks().split("\n");
    assertTrue(mine[1].matches(" +16  X .*  /dir/file"), mine[1]);
    assertTrue(mine[2].matches(" +17  S .*  -"), mine[2]);
    assertTrue(shell1.locks("--all").contains("  /dir/file\n"), shell1.locks("--all"));
    assertTrue(shell1.locks("--json").contains("\"path\": \"/dir/file\"}"));

    shell1.unbindInodePaths(ino -> Optional.of("/other"));
    assertTrue(shell1.locks().contains("/dir/file"), "only the bound service unbinds");
    shell1.unbindInodePaths(core);
    assertTrue(shell1.locks().split("\n")[1].matches(" +16  X .*  -"), shell1.locks());
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}

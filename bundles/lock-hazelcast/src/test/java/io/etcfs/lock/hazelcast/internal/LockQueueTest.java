package io.etcfs.lock.hazelcast.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.spi.lock.LockMode;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The queue's rules alone: who is granted, with which token, and who is recalled. */
class LockQueueTest {
  private static final long T = 1_000;

  @Test
  void sharedRequestsAreGrantedTogetherAndAnExclusiveOneAlone() {
    LockQueue q = LockQueue.empty().request(1, "a", LockMode.SHARED, T)
        .request(2, "b", LockMode.SHARED, T).request(3, "c", LockMode.EXCLUSIVE, T);
    assertTrue(q.of(1).granted() && q.of(2).granted());
    assertTrue(!q.of(3).granted(), "an exclusive request waits for the readers");
    assertEquals(3, q.conflictBehind(1).session(), "the readers are recalled for it");
    LockQueue after = q.remove(1, T).remove(2, T);
    assertTrue(after.of(3).granted());
  }

  @Test
  void aReaderArrivingAfterAWaitingWriterWaitsBehindIt() {
    LockQueue q = LockQueue.empty().request(1, "a", LockMode.SHARED, T)
        .request(2, "w", LockMode.EXCLUSIVE, T).request(3, "r", LockMode.SHARED, T);
    assertTrue(!q.of(3).granted());
    q = q.remove(1, T);
    assertTrue(q.of(2).granted() && !q.of(3).granted());
    q = q.remove(2, T);
    assertTrue(q.of(3).granted());
  }

  @Test
  void tokensGrowWithEveryGrantAndStartFromTheClock() {
    LockQueue q = LockQueue.empty().request(1, "a", LockMode.EXCLUSIVE, T);
    long first = q.of(1).token();
    assertEquals(T << LockQueue.TIME_SHIFT, first);
    q = q.request(2, "b", LockMode.EXCLUSIVE, T).remove(1, T);
    assertEquals(first + 1, q.of(2).token(), "same millisecond: the next one");
    q = q.remove(2, T + 5).request(3, "c", LockMode.EXCLUSIVE, T + 5);
    assertEquals((T + 5) << LockQueue.TIME_SHIFT, q.of(3).token());
    assertEquals(q.of(3).token(), q.lastToken());
  }

  @Test
  void oneRequestPerSessionAndAWithdrawnGrantStays() {
    LockQueue q = LockQueue.empty().request(1, "a", LockMode.EXCLUSIVE, T);
    assertSame(q, q.request(1, "a", LockMode.SHARED, T));
    assertSame(q, q.withdraw(1, T), "granted meanwhile: held after all");
    LockQueue waiting = q.request(2, "b", LockMode.SHARED, T);
    assertEquals(List.of(1L), waiting.withdraw(2, T).requests().stream()
        .map(LockQueue.Request::session).toList());
  }

  @Test
  void droppingADeadSessionGrantsTheNext() {
    LockQueue q = LockQueue.empty().request(1, "dead", LockMode.EXCLUSIVE, T)
        .request(2, "b", LockMode.SHARED, T).request(3, "c", LockMode.SHARED, T);
    q = q.removeIf(s -> s == 1, T + 1);
    assertTrue(q.of(2).granted() && q.of(3).granted());
    assertNull(q.conflictBehind(2));
  }
}

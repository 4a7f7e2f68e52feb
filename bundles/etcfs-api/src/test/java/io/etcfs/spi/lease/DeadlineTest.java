package io.etcfs.spi.lease;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(5)
class DeadlineTest {
  private final AtomicLong clock = new AtomicLong(1_000);
  private final Deadline deadline = new Deadline(clock::get, 1_100);

  @Test
  void runsFromWhenTheAcknowledgedRenewalWasSent() {
    clock.set(1_090);
    assertTrue(deadline.extend(1_050, 100));
    assertEquals(1_150, deadline.at());
    clock.set(1_149);
    assertFalse(deadline.expired());
    clock.set(1_150);
    assertTrue(deadline.expired());
  }

  @Test
  void neverMovesBackwards() {
    assertTrue(deadline.extend(1_010, 50));
    assertEquals(1_100, deadline.at());
  }

  @Test
  void aLateAcknowledgementDoesNotReviveAnExpiredDeadline() {
    clock.set(1_200);
    assertFalse(deadline.extend(1_090, 1_000));
    clock.set(1_150);
    assertTrue(deadline.expired());
  }

  @Test
  void anExplicitExpiryIsFinal() {
    deadline.expire();
    assertTrue(deadline.expired());
    assertFalse(deadline.extend(1_000, 1_000));
  }
}

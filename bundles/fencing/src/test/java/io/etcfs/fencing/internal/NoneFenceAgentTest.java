package io.etcfs.fencing.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeout;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(5)
class NoneFenceAgentTest {

  @Test
  void asksNothingAndReturnsAtOnce() {
    NoneFenceAgent agent = new NoneFenceAgent();
    assertEquals("none", agent.name());
    assertTimeout(Duration.ofMillis(500), () -> agent.fence("n2", 42, Duration.ofMinutes(1)));
  }

  @Test
  void namesMustBeOneKeyElement() {
    assertThrows(IllegalArgumentException.class, () -> Names.check("nodeName", "a/b"));
    assertThrows(IllegalArgumentException.class, () -> Names.check("nodeName", " n1"));
    assertThrows(IllegalArgumentException.class, () -> Names.check("nodeName", null));
    assertEquals("n1", Names.check("nodeName", "n1"));
  }
}

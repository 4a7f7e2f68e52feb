package io.etcfs.launcher.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine.TypeConversionException;

@Timeout(10)
class UnitsTest {
  @Test
  void sizes() {
    assertEquals(8L << 30, Units.parseSize("8G"));
    assertEquals(8L << 30, Units.parseSize("8GiB"));
    assertEquals(512L << 20, Units.parseSize("512m"));
    assertEquals(4096, Units.parseSize("4096"));
    for (String bad : new String[] {"", "G", "-1G", "0", "lots", "99999999999P"}) {
      assertThrows(TypeConversionException.class, () -> Units.parseSize(bad), bad);
    }
  }

  @Test
  void durations() {
    assertEquals(Duration.ofSeconds(10), Units.parseDuration("10s"));
    assertEquals(Duration.ofMillis(500), Units.parseDuration("500ms"));
    assertEquals(Duration.ofMinutes(2), Units.parseDuration("2m"));
    assertEquals(Duration.ofSeconds(7), Units.parseDuration("7"));
    assertThrows(TypeConversionException.class, () -> Units.parseDuration("soon"));
  }

  @Test
  void human() {
    assertEquals("4.0 GiB", Units.human(4L << 30));
    assertEquals("512 B", Units.human(512));
  }
}

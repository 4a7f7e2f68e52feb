package io.etcfs.launcher.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The node's exit statuses, and the systemd unit's restart policy that depends on them. */
class ExitStatusTest {
  /** The CLI's failure (1) and bad usage (2), which {@code mount --foreground} shares. */
  private static final int CLI_FAILURE = 1;

  @Test
  void aStoppedNodeThatHadFencedItselfExitsWithItsOwnStatus() {
    assertEquals(ExitStatus.FENCED, ExitStatus.ofStop(true));
    assertEquals(ExitStatus.LEFT, ExitStatus.ofStop(false));
    assertEquals(0, ExitStatus.LEFT);
  }

  @Test
  void everyStatusIsDistinctAndOutsideTheRangesOthersUse() {
    List<Integer> all = List.of(ExitStatus.LEFT, CLI_FAILURE, ExitStatus.USAGE,
        ExitStatus.START_FAILED, ExitStatus.FENCED, ExitStatus.SIGTERM);
    assertEquals(all.size(), Set.copyOf(all).size(), "statuses collide: " + all);
    // below 128 + signal (a JVM killed by a signal) and systemd's own 200-243 (a unit that
    // failed before its command ran)
    assertTrue(ExitStatus.FENCED > 0 && ExitStatus.FENCED < 128);
    assertEquals(143, ExitStatus.SIGTERM);
  }

  /** The unit in the source tree, as the tarball ships it (SystemdUnitsIT checks the tarball). */
  @Test
  void theServiceUnitNeverRestartsAFencedNodeAndTakesSigtermAsAStop() throws Exception {
    Path unit = Path.of("../distribution/src/etc/systemd/etcfs@.service");
    List<String> lines = Files.readAllLines(unit);
    Set<String> prevent = value(lines, "RestartPreventExitStatus");
    assertTrue(prevent.contains(Integer.toString(ExitStatus.FENCED)), prevent.toString());
    assertTrue(prevent.contains(Integer.toString(ExitStatus.USAGE)), prevent.toString());
    assertEquals(Set.of(Integer.toString(ExitStatus.SIGTERM)), value(lines, "SuccessExitStatus"));
    assertEquals(Set.of("on-failure"), value(lines, "Restart"));
  }

  private static Set<String> value(List<String> lines, String key) {
    List<String> found = lines.stream().filter(l -> l.startsWith(key + "=")).toList();
    assertEquals(1, found.size(), key + " set " + found.size() + " times");
    return Set.of(found.get(0).substring(key.length() + 1).strip().split("\\s+")).stream()
        .collect(Collectors.toSet());
  }
}

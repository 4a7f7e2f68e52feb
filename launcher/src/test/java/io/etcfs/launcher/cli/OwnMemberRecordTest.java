package io.etcfs.launcher.cli;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The mount's etcd check runs while the node's JVM boots; a member key the node itself wrote
 * meanwhile must not count as the name being live elsewhere.
 */
class OwnMemberRecordTest {
  private static final Path MP = Path.of("/mnt/a b:c");

  /** A record as the fencing bundle writes it (Properties text: the colon escaped). */
  private static String record(long pid, String mountpoint) {
    return "host=h1\npid=" + pid + "\nmountpoint=" + mountpoint.replace(":", "\\:")
        + "\njoined=2026-12-02T06\\:00\\:00Z\nleaseTtl=10\n";
  }

  @Test
  void theRecordOfTheNodeJustStartedIsItsOwn() {
    assertTrue(NodeLauncher.isOwnRecord(record(4242, MP.toString()), 4242, MP));
  }

  @Test
  void anotherPidAnotherMountpointOrNoPidIsAConflict() {
    assertFalse(NodeLauncher.isOwnRecord(record(4243, MP.toString()), 4242, MP));
    assertFalse(NodeLauncher.isOwnRecord(record(4242, "/mnt/other"), 4242, MP));
    assertFalse(NodeLauncher.isOwnRecord(record(4242, MP.toString()), -1, MP),
        "a check with no node started (foreground) owns nothing");
    assertFalse(NodeLauncher.isOwnRecord("not a record \\u12",
        4242, MP), "an unreadable record is a conflict, as before");
  }
}

package io.etcfs.launcher.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.etcfs.core.check.CheckReport;
import io.etcfs.core.check.Finding;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@code etcfs fsck --json}: one object, strings escaped, pending findings marked. */
@Timeout(10)
class FsckJsonTest {
  @Test
  void aReportIsOneEscapedObject() {
    CheckReport r = new CheckReport("fs", 42, List.of(
        new Finding("nlink", "inode 5", "says \"3\"\tnot 1", false),
        new Finding("recovery-due", "slots/00", "dead\n", true)),
        List.of("data"), Map.of("inodes", 7L));
    assertEquals("{\"filesystem\":\"fs\",\"revision\":42,\"clean\":false,\"findings\":["
        + "{\"kind\":\"nlink\",\"subject\":\"inode 5\",\"detail\":\"says \\\"3\\\"\\tnot 1\","
        + "\"pending\":false},{\"kind\":\"recovery-due\",\"subject\":\"slots/00\",\"detail\":"
        + "\"dead\\n\",\"pending\":true}],\"notChecked\":[\"data\"],\"stats\":{\"inodes\":7},"
        + "\"repaired\":[\"x\\u0001\"]}", FsckJson.of(r, List.of("x\u0001")));
  }
}

package io.etcfs.launcher.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code etcfs fsck} refuses bad usage with status 2 and one line, before touching etcd. */
@Timeout(30)
class FsckCommandTest {
  @TempDir Path dir;

  private record Run(int status, String err) {}

  private static Run run(String... args) {
    PrintStream saved = System.err;
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
    try {
      return new Run(Main.run(args), err.toString(StandardCharsets.UTF_8));
    } finally {
      System.setErr(saved);
    }
  }

  private static void oneLine(Run r, String names) {
    assertEquals(2, r.status(), r.err());
    assertEquals(1, r.err().strip().lines().count(), r.err());
    assertTrue(r.err().contains(names), r.err());
    assertTrue(!r.err().contains("\tat "), r.err());
  }

  @Test
  void dirAndEtcdTogetherAreRefused() {
    oneLine(run("fsck", "--dir", dir.toString(), "--etcd", "http://127.0.0.1:1"), "not both");
  }

  @Test
  void aDirWithoutAClusterIsNamed() {
    oneLine(run("fsck", "--dir", dir.toString()), "no local cluster in " + dir);
  }

  @Test
  void aBadNameIsNamed() {
    oneLine(run("fsck", "--etcd", "http://127.0.0.1:1", "--name", "a/b"), "a/b");
  }

  @Test
  void aMissingDeviceIsNamed() {
    oneLine(run("fsck", "--etcd", "http://127.0.0.1:1", "--device", dir.resolve("nope")
        .toString()), "nope");
  }

  @Test
  void anUnknownOptionIsBadUsage() {
    Run r = run("fsck", "--frobnicate");
    assertEquals(2, r.status(), r.err());
  }
}

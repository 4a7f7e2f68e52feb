package io.etcfs.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** bin/etcfs from the unpacked tarball: version, help, and bad usage. */
@Timeout(300)
class CliIT {
  private static final Duration T = Duration.ofSeconds(60);
  @TempDir Path runtime;

  @Test
  void versionNamesTheBuildAndTheJava() throws Exception {
    Distribution.Result r = Distribution.etcfs(runtime, T, "version");
    assertEquals(0, r.exit(), r.toString());
    assertTrue(r.out().startsWith("etcfs 0."), r.toString());
    assertTrue(r.out().contains("java 17") || r.out().contains("java "), r.toString());
  }

  @ParameterizedTest
  @ValueSource(strings = {"version", "format", "mount", "umount", "status", "shell", "up", "down"})
  void everySubcommandHasHelp(String sub) throws Exception {
    Distribution.Result r = Distribution.etcfs(runtime, T, sub, "--help");
    assertEquals(0, r.exit(), r.toString());
    assertTrue(r.out().startsWith("Usage: etcfs " + sub), r.toString());
  }

  @Test
  void topLevelHelpListsTheSubcommands() throws Exception {
    Distribution.Result r = Distribution.etcfs(runtime, T, "--help");
    assertEquals(0, r.exit(), r.toString());
    for (String sub : List.of("format", "mount", "umount", "status", "shell", "up", "down")) {
      assertTrue(r.out().contains(sub), sub + " missing from\n" + r);
    }
  }

  @Test
  void unknownSubcommandIsOneLineAndStatusTwo() throws Exception {
    Distribution.Result r = Distribution.etcfs(runtime, T, "frobnicate");
    assertEquals(2, r.exit(), r.toString());
    assertTrue(r.errLines().get(0).startsWith("etcfs: Unmatched argument"), r.toString());
    assertTrue(r.errLines().get(0).contains("frobnicate"), r.toString());
    assertNoStackTrace(r);
  }

  @Test
  void unknownOptionIsOneLineAndStatusTwo() throws Exception {
    Distribution.Result r = Distribution.etcfs(runtime, T, "status", "--bogus");
    assertEquals(2, r.exit(), r.toString());
    assertTrue(r.errLines().get(0).contains("--bogus"), r.toString());
    assertNoStackTrace(r);
  }

  @Test
  void badSizeIsNamed() throws Exception {
    Distribution.Result r = Distribution.etcfs(runtime, T, "format", "/tmp/x.img", "--size",
        "lots", "--etcd", "http://127.0.0.1:1");
    assertEquals(2, r.exit(), r.toString());
    assertTrue(r.err().contains("invalid size 'lots'"), r.toString());
  }

  @Test
  void umountOfAnUnknownMountpointSaysSo() throws Exception {
    Distribution.Result r = Distribution.etcfs(runtime, T, "umount", runtime.toString());
    assertEquals(1, r.exit(), r.toString());
    assertEquals("etcfs: no etcfs node serves " + runtime, r.errLines().get(0), r.toString());
    assertNoStackTrace(r);
  }

  static void assertNoStackTrace(Distribution.Result r) {
    assertTrue(!r.err().contains("\tat ") && !r.out().contains("\tat "), "stack trace in\n" + r);
  }
}

package io.etcfs.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
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
  @ValueSource(strings = {"version", "format", "mount", "umount", "status", "fsck", "switch",
      "shell", "up", "down", "wait", "top"})
  void everySubcommandHasHelp(String sub) throws Exception {
    Distribution.Result r = Distribution.etcfs(runtime, T, sub, "--help");
    assertEquals(0, r.exit(), r.toString());
    assertTrue(r.out().startsWith("Usage: etcfs " + sub), r.toString());
  }

  @Test
  void topLevelHelpListsTheSubcommands() throws Exception {
    Distribution.Result r = Distribution.etcfs(runtime, T, "--help");
    assertEquals(0, r.exit(), r.toString());
    for (String sub : List.of("format", "mount", "umount", "status", "fsck", "switch", "shell",
        "up", "down", "wait", "top")) {
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
  void aSwitchToAnUnknownBackendIsRefusedBeforeEtcdIsAskedAndTwoTargetsAsUsage()
      throws Exception {
    Distribution.Result r = Distribution.etcfs(runtime, T, "switch", "--alloc", "buddy",
        "--etcd", "http://127.0.0.1:1");
    assertEquals(1, r.exit(), r.toString());
    assertEquals(List.of("etcfs: unknown allocator 'buddy' (arena or shared)"), r.errLines());
    Distribution.Result lock = Distribution.etcfs(runtime, T, "switch", "--lock", "zookeeper",
        "--etcd", "http://127.0.0.1:1");
    assertEquals(1, lock.exit(), lock.toString());
    assertEquals(List.of("etcfs: unknown lock backend 'zookeeper' (etcd or hazelcast)"),
        lock.errLines());
    Distribution.Result both = Distribution.etcfs(runtime, T, "switch", "--alloc", "shared",
        "--lock", "etcd", "--etcd", "http://127.0.0.1:1");
    assertEquals(2, both.exit(), both.toString());
    assertTrue(both.errLines().get(0).contains("mutually exclusive"), both.toString());
    assertNoStackTrace(both);
  }

  @Test
  void badSizeIsNamed() throws Exception {
    Distribution.Result r = Distribution.etcfs(runtime, T, "format", "/tmp/x.img", "--size",
        "lots", "--etcd", "http://127.0.0.1:1");
    assertEquals(2, r.exit(), r.toString());
    assertTrue(r.err().contains("invalid size 'lots'"), r.toString());
  }

  static Stream<Arguments> badBackends() {
    return Stream.of(
        Arguments.of(List.of("--lock", "zookeeper"),
            "etcfs: unknown lock backend 'zookeeper' (etcd or hazelcast)"),
        Arguments.of(List.of("--alloc", "buddy"), "etcfs: unknown allocator 'buddy' (arena or shared)"));
  }

  /** {@code etcfs up} refuses the same before it starts etcd or creates its directory. */
  @ParameterizedTest
  @MethodSource("badBackends")
  void upRefusesABackendItCannotUseBeforeStartingAnything(List<String> backend, String line)
      throws Exception {
    Path dir = runtime.resolve("never-up");
    List<String> args = new ArrayList<>(List.of("up", "--dir", dir.toString(), "--nodes", "1"));
    args.addAll(backend);
    Distribution.Result r = Distribution.etcfs(runtime, T, args.toArray(String[]::new));
    assertEquals(2, r.exit(), r.toString());
    assertEquals(line, r.errLines().get(0), r.toString());
    assertNoStackTrace(r);
    assertFalse(Files.exists(dir), "up created " + dir);
  }

  /**
   * A backend format cannot use is bad usage, refused before the device or etcd (here
   * unreachable) is touched: status 2, one line, no image file left behind.
   */
  @ParameterizedTest
  @MethodSource("badBackends")
  void formatRefusesABackendItCannotUseBeforeTouchingAnything(List<String> backend, String line)
      throws Exception {
    Path image = runtime.resolve("never.img");
    List<String> args = new ArrayList<>(List.of("format", image.toString(), "--size", "1G",
        "--etcd", "http://127.0.0.1:1"));
    args.addAll(backend);
    Distribution.Result r = Distribution.etcfs(runtime, T, args.toArray(String[]::new));
    assertEquals(2, r.exit(), r.toString());
    assertEquals(line, r.errLines().get(0), r.toString());
    assertNoStackTrace(r);
    assertFalse(Files.exists(image), "format created " + image);
  }

  @Test
  void umountOfAnUnknownMountpointSaysSo() throws Exception {
    Distribution.Result r = Distribution.etcfs(runtime, T, "umount", runtime.toString());
    assertEquals(1, r.exit(), r.toString());
    assertEquals("etcfs: no etcfs node serves " + runtime, r.errLines().get(0), r.toString());
    assertNoStackTrace(r);
  }

  static Stream<Arguments> badFenceOptions() {
    return Stream.of(
        Arguments.of(List.of("--fence-agent", "stonith"),
            "etcfs: unknown fence agent 'stonith' (none, exec or reservation)"),
        Arguments.of(List.of("--fence-agent", "exec"),
            "etcfs: --fence-agent exec needs --fence-command CMD"),
        Arguments.of(List.of("--fence-command", "aws ec2 stop-instances"),
            "etcfs: --fence-command is only for --fence-agent exec (got --fence-agent none)"),
        Arguments.of(List.of("--fence-timeout", "0s"),
            "etcfs: --fence-timeout must be positive (got 0s)"),
        Arguments.of(List.of("--fence-timeout", "-3s"),
            "etcfs: --fence-timeout must be positive (got -3s)"));
  }

  /** Checked before etcd (here unreachable) is asked anything: status 2, nothing created. */
  @ParameterizedTest
  @MethodSource("badFenceOptions")
  void badFenceOptionsAreRefusedBeforeMountStartsAnything(List<String> fence, String line)
      throws Exception {
    Path state = runtime.resolve("state");
    List<String> args = new ArrayList<>(List.of("mount", runtime.resolve("dev.img").toString(),
        runtime.toString(), "--etcd", "http://127.0.0.1:1", "--state-dir", state.toString()));
    args.addAll(fence);
    Distribution.Result r = Distribution.etcfs(runtime, T, args.toArray(String[]::new));
    assertEquals(2, r.exit(), r.toString());
    assertEquals(line, r.errLines().get(0), r.toString());
    assertNoStackTrace(r);
    assertFalse(Files.exists(state), "mount created its state dir");
  }

  @ParameterizedTest
  @MethodSource("badFenceOptions")
  void badFenceOptionsAreRefusedBeforeUpStartsAnything(List<String> fence, String line)
      throws Exception {
    Path dir = runtime.resolve("cluster");
    List<String> args = new ArrayList<>(List.of("up", "--dir", dir.toString()));
    args.addAll(fence);
    Distribution.Result r = Distribution.etcfs(runtime, T, args.toArray(String[]::new));
    assertEquals(2, r.exit(), r.toString());
    assertEquals(line, r.errLines().get(0), r.toString());
    assertNoStackTrace(r);
    assertFalse(Files.exists(dir), "up created its cluster dir");
  }

  @Test
  void reservationsAreRefusedOnAnImageFile() throws Exception {
    Path image = Files.writeString(runtime.resolve("dev.img"), "");
    Distribution.Result r = Distribution.etcfs(runtime, T, "mount", image.toString(),
        runtime.toString(), "--etcd", "http://127.0.0.1:1", "--fence-agent", "reservation");
    assertEquals(2, r.exit(), r.toString());
    assertEquals("etcfs: --fence-agent reservation needs a shared block device with persistent "
        + "reservations; " + image + " is a regular file", r.errLines().get(0), r.toString());
    Distribution.Result up = Distribution.etcfs(runtime, T, "up", "--dir",
        runtime.resolve("cluster").toString(), "--fence-agent", "reservation");
    assertEquals(2, up.exit(), up.toString());
    assertEquals("etcfs: --fence-agent reservation needs a shared block device with persistent "
        + "reservations; etcfs up puts its nodes on an image file", up.errLines().get(0));
    assertFalse(Files.exists(runtime.resolve("cluster")), "up created its cluster dir");
  }

  /** ETCFS_NODE_CONFIG is checked before anything is started or asked: one line, status 1. */
  @Test
  void aWrongComponentSettingIsRefusedBeforeMountStartsAnything() throws Exception {
    Path state = runtime.resolve("state");
    Path image = Files.writeString(runtime.resolve("dev.img"), "");
    Path mp = Files.createDirectories(runtime.resolve("mp"));
    String[][] cases = {
      {"io.etcfs.lock.etc.cleanReleaseMillis=5",
          "etcfs: ETCFS_NODE_CONFIG: no component 'io.etcfs.lock.etc' on this node (configured: "},
      {"io.etcfs.core.nodeName=other",
          "etcfs: ETCFS_NODE_CONFIG: io.etcfs.core.nodeName is set by etcfs from its command"
              + " line; use the option instead"},
      {"cleanReleaseMillis",
          "etcfs: ETCFS_NODE_CONFIG: 'cleanReleaseMillis' is not PID.property=value"},
    };
    for (String[] c : cases) {
      Distribution.Result r = Distribution.etcfs(runtime, T,
          java.util.Map.of("ETCFS_NODE_CONFIG", c[0]), "mount", image.toString(), mp.toString(),
          "--etcd", "http://127.0.0.1:1", "--state-dir", state.toString());
      assertEquals(1, r.exit(), r.toString());
      assertEquals(1, r.errLines().size(), r.toString());
      assertTrue(r.errLines().get(0).startsWith(c[1]), r.toString());
      assertNoStackTrace(r);
      assertFalse(Files.exists(state), "mount created its state dir");
    }
  }

  static void assertNoStackTrace(Distribution.Result r) {
    assertTrue(!r.err().contains("\tat ") && !r.out().contains("\tat "), "stack trace in\n" + r);
  }
}

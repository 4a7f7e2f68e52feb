package io.etcfs.launcher.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bad fence options are bad usage: one line naming the problem, status 2, and nothing started
 * (etcd at 127.0.0.1:1 is never reached, which would be another message and status 1).
 */
@Timeout(30)
class FenceOptionsTest {
  private static final String NO_ETCD = "http://127.0.0.1:1";
  @TempDir Path tmp;

  @Test
  void anUnknownAgentIsNamed() throws Exception {
    assertBadUsage("etcfs: unknown fence agent 'stonith' (none, exec or reservation)",
        mount("--fence-agent", "stonith"));
  }

  @Test
  void execNeedsACommand() throws Exception {
    assertBadUsage("etcfs: --fence-agent exec needs --fence-command CMD",
        mount("--fence-agent", "exec"));
    assertBadUsage("etcfs: --fence-agent exec needs --fence-command CMD",
        mount("--fence-agent", "exec", "--fence-command", " "));
  }

  @Test
  void aCommandIsOnlyForExec() throws Exception {
    assertBadUsage("etcfs: --fence-command is only for --fence-agent exec (got --fence-agent none)",
        mount("--fence-command", "true"));
    assertBadUsage("etcfs: --fence-command is only for --fence-agent exec (got --fence-agent "
        + "reservation)", mount("--fence-agent", "reservation", "--fence-command", "true"));
  }

  @Test
  void theTimeoutMustBePositive() throws Exception {
    assertBadUsage("etcfs: --fence-timeout must be positive (got 0s)",
        mount("--fence-timeout", "0s"));
    assertBadUsage("etcfs: --fence-timeout must be positive (got -5s)",
        mount("--fence-timeout", "-5s"));
  }

  @Test
  void reservationsNeedABlockDevice() throws Exception {
    Path image = Files.writeString(tmp.resolve("dev.img"), "");
    assertBadUsage("etcfs: --fence-agent reservation needs a shared block device with persistent "
        + "reservations; " + image + " is a regular file",
        run("mount", image.toString(), tmp.toString(), "--etcd", NO_ETCD, "--fence-agent",
            "reservation"));
  }

  @Test
  void upRefusesTheSameAndStartsNothing() throws Exception {
    Path dir = tmp.resolve("cluster");
    assertBadUsage("etcfs: --fence-agent exec needs --fence-command CMD",
        run("up", "--dir", dir.toString(), "--etcd", NO_ETCD, "--fence-agent", "exec"));
    assertBadUsage("etcfs: --fence-agent reservation needs a shared block device with persistent "
        + "reservations; etcfs up puts its nodes on an image file",
        run("up", "--dir", dir.toString(), "--etcd", NO_ETCD, "--fence-agent", "reservation"));
    assertFalse(Files.exists(dir), "up created " + dir);
  }

  private String[] mount(String... fence) {
    List<String> args = new ArrayList<>(List.of("mount", tmp.resolve("none.img").toString(),
        tmp.toString(), "--etcd", NO_ETCD));
    args.addAll(List.of(fence));
    return args.toArray(String[]::new);
  }

  private static String[] run(String... args) {
    return args;
  }

  private static void assertBadUsage(String line, String[] args) {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    PrintStream old = System.err;
    int status;
    System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
    try {
      status = Main.run(args);
    } finally {
      System.setErr(old);
    }
    List<String> lines = err.toString(StandardCharsets.UTF_8).lines().toList();
    assertEquals(2, status, String.join("\n", lines));
    assertEquals(line, lines.get(0));
  }
}

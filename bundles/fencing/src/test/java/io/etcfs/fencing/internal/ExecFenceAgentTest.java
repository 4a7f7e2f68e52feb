package io.etcfs.fencing.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.spi.fencing.FenceException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The exec agent against real {@code /bin/sh} commands. */
@Timeout(30)
class ExecFenceAgentTest {
  private static final Duration T = Duration.ofSeconds(10);
  @TempDir Path tmp;

  @Test
  void exitZeroMeansFenced() throws Exception {
    new ExecFenceAgent("exit 0", "prod").fence("n2", 42, T);
  }

  @Test
  void theCommandSeesWhoToFence() throws Exception {
    Path out = tmp.resolve("env");
    new ExecFenceAgent("printf '%s %s %s %s' \"$ETCFS_FENCE_ACTION\" \"$ETCFS_FENCE_NODE\" "
        + "\"$ETCFS_FENCE_GENERATION\" \"$ETCFS_FENCE_FS\" > " + out, "prod").fence("n2", 42, T);
    assertEquals("fence n2 42 prod", Files.readString(out));
  }

  @Test
  void nonZeroExitNamesTheStatusAndTheLastErrorLine() {
    ExecFenceAgent agent = new ExecFenceAgent(
        "echo trying; echo 'first complaint' >&2; echo 'instance i-0abc not found' >&2; exit 3", "");
    FenceException e = assertThrows(FenceException.class, () -> agent.fence("n2", 42, T));
    assertEquals("fence command for n2 (generation 42) exited with status 3: "
        + "instance i-0abc not found", e.getMessage());
  }

  @Test
  void aHangingCommandIsKilledWithItsChildrenWithinTheTimeout() throws Exception {
    Path child = tmp.resolve("child.pid");
    ExecFenceAgent agent = new ExecFenceAgent("sleep 60 & echo $! > " + child + "; sleep 60", "");
    long start = System.nanoTime();
    FenceException e = assertThrows(FenceException.class,
        () -> agent.fence("n2", 42, Duration.ofSeconds(1)));
    long tookMs = (System.nanoTime() - start) / 1_000_000;
    assertEquals("fence command for n2 timed out after 1 s", e.getMessage());
    assertTrue(tookMs < 8_000, "took " + tookMs + " ms");
    long pid = Long.parseLong(Files.readString(child).strip());
    assertTrue(Procs.gone(pid, 2_000), "the command's child " + pid + " still runs");
  }

  @Test
  void theCommandsOutputIsLoggedLineByLine() throws Exception {
    List<String> logged = new CopyOnWriteArrayList<>();
    Handler h = new Handler() {
      @Override
      public void publish(LogRecord r) {
        logged.add(r.getLevel() + " " + new SimpleFormatter().formatMessage(r));
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    };
    Logger jul = Logger.getLogger(CommandRunner.class.getName());
    jul.addHandler(h);
    try {
      new ExecFenceAgent("echo 'stopping i-0abc'; echo 'stopped' >&2", "").fence("n2", 42, T);
    } finally {
      jul.removeHandler(h);
    }
    assertTrue(logged.contains("INFO fence command for n2: stopping i-0abc"), logged.toString());
    assertTrue(logged.contains("INFO fence command for n2: stopped"), logged.toString());
  }

  @Test
  void registerAndUnregisterRunNothing() throws Exception {
    Path ran = tmp.resolve("ran");
    ExecFenceAgent agent = new ExecFenceAgent("touch " + ran, "");
    agent.register("n1", 7, T);
    agent.unregister("n1", 7, T);
    assertFalse(Files.exists(ran));
    assertEquals("exec", agent.name());
  }

  @Test
  void aMissingOrBlankCommandIsRefusedAtActivation() {
    for (String bad : new String[] {null, "", "   "}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> new ExecFenceAgent(bad, "prod"));
      assertEquals("io.etcfs.fence.exec: command is missing or blank (the shell command that "
          + "fences a node)", e.getMessage());
    }
  }
}

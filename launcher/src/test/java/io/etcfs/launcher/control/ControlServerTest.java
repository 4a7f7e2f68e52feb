package io.etcfs.launcher.control;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(30)
class ControlServerTest {
  @TempDir Path tmp;

  @Test
  void answersWithOutputAndStatusAndIsOwnerOnly() throws IOException {
    Path sock = tmp.resolve("n.sock");
    Files.writeString(sock, "stale socket of a dead node");
    try (ControlServer s = ControlServer.start(sock, (req, out) -> {
      out.println("got " + req);
      return req.equals("fail") ? 3 : 0;
    })) {
      assertEquals("rw-------",
          PosixFilePermissions.toString(Files.getPosixFilePermissions(sock)));
      assertEquals(new ControlClient.Answer(0, "got hello\n"), ControlClient.ask(sock, "hello"));
      assertEquals(3, ControlClient.ask(sock, "fail").status());
    }
    assertFalse(Files.exists(sock));
  }

  @Test
  void aThrowingHandlerAnswersOneLineAndKeepsServing() throws IOException {
    Path sock = tmp.resolve("n.sock");
    try (ControlServer s = ControlServer.start(sock, (req, out) -> {
      if (req.equals("boom")) {
        throw new IllegalStateException("no such inode");
      }
      return 0;
    })) {
      assertEquals(new ControlClient.Answer(1, "etcfs: no such inode\n"),
          ControlClient.ask(sock, "boom"));
      assertEquals(0, ControlClient.ask(sock, "ok").status());
    }
  }

  @Test
  void noSocketIsAnIoError() {
    assertThrows(IOException.class, () -> ControlClient.ask(tmp.resolve("none.sock"), "health"));
  }

  @Test
  void aClientThatGoesAwayInterruptsAnAbandonableRequestOnly() throws Exception {
    Path sock = tmp.resolve("n.sock");
    java.util.concurrent.CountDownLatch running = new java.util.concurrent.CountDownLatch(2);
    java.util.concurrent.BlockingQueue<String> ends = new java.util.concurrent.LinkedBlockingQueue<>();
    try (ControlServer s = ControlServer.start(sock, (req, out) -> {
      running.countDown();
      try {
        Thread.sleep(req.startsWith("exec") ? 20_000 : 1_000);
        ends.add(req + " finished");
      } catch (InterruptedException e) {
        ends.add(req + " interrupted");
      }
      return 0;
    }, req -> req.startsWith("exec "))) {
      ControlClient.Call exec = ControlClient.Call.open(sock);
      ControlClient.Call stop = ControlClient.Call.open(sock);
      Thread a = new Thread(() -> sendQuietly(exec, "exec sleep"));
      Thread b = new Thread(() -> sendQuietly(stop, "stop"));
      a.start();
      b.start();
      running.await();
      exec.close();
      stop.close();
      assertEquals("exec sleep interrupted", ends.poll(10, java.util.concurrent.TimeUnit.SECONDS));
      assertEquals("stop finished", ends.poll(10, java.util.concurrent.TimeUnit.SECONDS));
      assertEquals(new ControlClient.Answer(0, ""), ControlClient.ask(sock, "health"));
    }
  }

  @Test
  void aWatchedRequestWhoseClientStaysIsAnsweredAsAnyOther() throws IOException {
    Path sock = tmp.resolve("n.sock");
    try (ControlServer s = ControlServer.start(sock, (req, out) -> {
      out.println("ran " + req);
      return Thread.currentThread().isInterrupted() ? 9 : 0;
    }, req -> true)) {
      for (int i = 0; i < 20; i++) {
        assertEquals(new ControlClient.Answer(0, "ran exec lb " + i + "\n"),
            ControlClient.ask(sock, "exec lb " + i));
      }
    }
  }

  private static void sendQuietly(ControlClient.Call call, String request) {
    try {
      call.send(request, new java.io.PrintStream(java.io.OutputStream.nullOutputStream()));
    } catch (IOException e) {
      // The test closes the call under it.
    }
  }
}

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
}

package io.etcfs.launcher.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.etcfs.launcher.UserError;
import io.etcfs.launcher.control.ControlServer;
import io.etcfs.launcher.node.EtcdConnection;
import io.etcfs.launcher.node.NodeSpec;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(30)
class NodeLinkTest {
  @TempDir Path tmp;

  private NodeLink link() {
    return new NodeLink(new NodeSpec("fs", "node1", tmp.resolve("dev"), tmp.resolve("mnt"), tmp,
        tmp.resolve("node1.log"), EtcdConnection.of("http://127.0.0.1:2379"), 10, "etcd"));
  }

  @Test
  void aSocketLeftByADeadNodeIsOneLine() throws Exception {
    Path sock = tmp.resolve("node1.sock");
    try (ServerSocketChannel dead = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      dead.bind(UnixDomainSocketAddress.of(sock));
    }
    UserError e = assertThrows(UserError.class, () -> link().exec("lb", System.out));
    assertEquals("node node1 at " + sock + " is not running (connection refused)", e.getMessage());
  }

  @Test
  void noSocketAtAllIsOneLine() {
    UserError e = assertThrows(UserError.class, () -> link().exec("lb", System.out));
    assertEquals("node node1 at " + tmp.resolve("node1.sock")
        + " is not running (no control socket)", e.getMessage());
  }

  @Test
  void abandonStopsWaitingAndTheServerKeepsServing() throws Exception {
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    try (ControlServer s = ControlServer.start(tmp.resolve("node1.sock"), (req, out) -> {
      if (req.equals("exec slow")) {
        started.countDown();
        try {
          release.await(20, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      out.println("done " + req);
      return 0;
    })) {
      NodeLink link = link();
      Thread ctrlC = new Thread(() -> {
        try {
          started.await(20, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          return;
        }
        link.abandon();
      });
      ctrlC.start();
      assertEquals(NodeLink.INTERRUPTED, link.exec("slow", System.out));
      release.countDown();
      ByteArrayOutputStream buf = new ByteArrayOutputStream();
      assertEquals(0, link.exec("lb", new PrintStream(buf, true, StandardCharsets.UTF_8)));
      assertEquals("done exec lb\n", buf.toString(StandardCharsets.UTF_8));
    }
  }

  @Test
  void completionsGoEncodedAndComeBackDecoded() throws Exception {
    List<String> asked = new java.util.ArrayList<>();
    try (ControlServer s = ControlServer.start(tmp.resolve("node1.sock"), (req, out) -> {
      asked.add(req);
      out.println("p %2Fmnt%2Fa+b%2F -");
      out.println("c node2 host%3A2");
      out.println("garbage line");
      return 0;
    })) {
      List<io.etcfs.spi.shell.Candidate> got = link().complete(List.of("fence", "", "it's"), 1);
      assertEquals(List.of(new io.etcfs.spi.shell.Candidate("/mnt/a b/", null, false),
          new io.etcfs.spi.shell.Candidate("node2", "host:2", true)), got);
      // "fence" = ZmVuY2U, "" = nothing, "it's" = aXQncw: only [A-Za-z0-9_-] reach Gogo.
      assertEquals(List.of("exec etcfs:_candidates 1 wZmVuY2U w waXQncw"), asked);
    }
  }

  @Test
  void aNodeThatCannotCompleteOffersNothing() throws Exception {
    try (ControlServer s = ControlServer.start(tmp.resolve("node1.sock"), (req, out) -> {
      out.println("Command not found: etcfs:_candidates");
      return 1;
    })) {
      assertEquals(List.of(), link().complete(List.of("fence", ""), 1));
    }
  }
}

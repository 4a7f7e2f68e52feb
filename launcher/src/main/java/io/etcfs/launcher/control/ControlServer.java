package io.etcfs.launcher.control;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.function.BiFunction;
import java.util.function.Predicate;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The node's control socket: a Unix domain socket, owner-only, because whoever reaches it can
 * stop the node (and, with the shell, fence others). One request per connection: the client
 * sends one line, the server answers with output lines and a last line {@code %%END <status>}.
 */
public final class ControlServer implements AutoCloseable {
  public static final String END = "%%END ";
  private static final Logger LOG = Logger.getLogger(ControlServer.class.getName());

  private final Path path;
  private final ServerSocketChannel server;
  private final BiFunction<String, PrintStream, Integer> handler;
  private final Predicate<String> abandonable;
  private final Thread acceptor;
  private final java.util.Set<Thread> requests = java.util.concurrent.ConcurrentHashMap.newKeySet();

  private ControlServer(Path path, ServerSocketChannel server,
      BiFunction<String, PrintStream, Integer> handler, Predicate<String> abandonable) {
    this.path = path;
    this.server = server;
    this.handler = handler;
    this.abandonable = abandonable;
    this.acceptor = new Thread(this::acceptLoop, "etcfs-control");
    acceptor.setDaemon(true);
  }

  /**
   * Binds the socket at {@code path} (replacing a stale one left by a dead node) and serves
   * requests with {@code handler}, which writes its output and returns the exit status.
   */
  public static ControlServer start(Path path, BiFunction<String, PrintStream, Integer> handler)
      throws IOException {
    return start(path, handler, request -> false);
  }

  /**
   * As {@link #start(Path, BiFunction)}; a request that {@code abandonable} accepts has its
   * thread interrupted when its client goes away before the answer (Ctrl-C in {@code etcfs
   * shell}), as Gogo's own shell interrupts a command on Ctrl-C. Other requests ({@code stop})
   * always run to their end.
   */
  public static ControlServer start(Path path, BiFunction<String, PrintStream, Integer> handler,
      Predicate<String> abandonable) throws IOException {
    Files.deleteIfExists(path);
    ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
    server.bind(UnixDomainSocketAddress.of(path));
    Files.setPosixFilePermissions(path, PosixFilePermissions.fromString("rw-------"));
    ControlServer s = new ControlServer(path, server, handler, abandonable);
    s.acceptor.start();
    return s;
  }

  private void acceptLoop() {
    while (server.isOpen()) {
      try {
        SocketChannel client = server.accept();
        Thread t = new Thread(() -> serve(client), "etcfs-control-request");
        t.setDaemon(true);
        requests.add(t);
        t.start();
      } catch (IOException e) {
        if (server.isOpen()) {
          LOG.log(Level.WARNING, "control socket accept failed", e);
        }
      }
    }
  }

  private void serve(SocketChannel client) {
    try {
      answer(client);
    } finally {
      requests.remove(Thread.currentThread());
    }
  }

  private void answer(SocketChannel client) {
    try (client;
        BufferedReader in = new BufferedReader(
            new InputStreamReader(Channels.newInputStream(client), StandardCharsets.UTF_8));
        OutputStream raw = Channels.newOutputStream(client)) {
      String request = in.readLine();
      if (request == null) {
        return;
      }
      ByteArrayOutputStream buf = new ByteArrayOutputStream();
      int status;
      ClientWatch watch = abandonable.test(request) ? ClientWatch.start(client) : null;
      boolean gone;
      try (PrintStream out = new PrintStream(buf, true, StandardCharsets.UTF_8)) {
        status = handle(request, out);
      } finally {
        gone = watch != null && watch.finish();
      }
      if (gone) {
        LOG.fine("control client went away during: " + request);
        return;
      }
      String text = buf.toString(StandardCharsets.UTF_8);
      if (!text.isEmpty() && !text.endsWith("\n")) {
        text += "\n";
      }
      raw.write((text + END + status + "\n").getBytes(StandardCharsets.UTF_8));
      raw.flush();
    } catch (IOException e) {
      LOG.log(Level.FINE, "control client went away", e);
    }
  }

  private int handle(String request, PrintStream out) {
    try {
      return handler.apply(request, out);
    } catch (RuntimeException e) {
      // The control socket must never take the node down, whatever a request does.
      LOG.log(Level.WARNING, "control request failed: " + request, e);
      out.println("etcfs: " + e.getMessage());
      return 1;
    }
  }

  /**
   * Stops accepting, then gives requests in flight (a {@code stop} among them, whose answer is
   * written after the framework stopped) a bounded time to send their answers.
   */
  @Override
  public void close() throws IOException {
    server.close();
    Files.deleteIfExists(path);
    // One deadline for all: a command left running by a client that went away must not make
    // the node's stop wait 5 s more for each such command.
    long deadline = System.nanoTime() + 5_000_000_000L;
    for (Thread t : requests) {
      long left = (deadline - System.nanoTime()) / 1_000_000;
      if (t != Thread.currentThread() && left > 0) {
        try {
          t.join(left);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }
  }
}

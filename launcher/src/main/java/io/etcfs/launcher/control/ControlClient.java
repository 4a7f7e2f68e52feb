package io.etcfs.launcher.control;

import io.etcfs.launcher.UserError;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/** Sends one request to a node's control socket and relays its answer. */
public final class ControlClient {
  private ControlClient() {}

  /**
   * Sends {@code request}, copies the answer to {@code out}, and returns the node's status.
   *
   * @throws IOException if the socket cannot be reached (no node, or a dead one)
   */
  public static int call(Path socket, String request, PrintStream out) throws IOException {
    try (Call c = Call.open(socket)) {
      return c.send(request, out);
    }
  }

  /** Like {@link #call} but collects the answer; the status is the first element. */
  public static Answer ask(Path socket, String request) throws IOException {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    int status;
    try (PrintStream ps = new PrintStream(buf, true, StandardCharsets.UTF_8)) {
      status = call(socket, request, ps);
    }
    return new Answer(status, buf.toString(StandardCharsets.UTF_8));
  }

  /** Like {@link #ask} but turns an unreachable socket into a one-line user error. */
  public static Answer askOrFail(Path socket, String request) {
    try {
      return ask(socket, request);
    } catch (IOException e) {
      throw new UserError("cannot reach the node at " + socket + ": " + e.getMessage(), e);
    }
  }

  /**
   * One connection, one request. Closing it from another thread (Ctrl-C in the shell) ends a
   * {@link #send} that waits for the answer: the client stops waiting, the node finishes the
   * request on its own and finds nobody to answer.
   */
  public static final class Call implements Closeable {
    private final SocketChannel ch;

    private Call(SocketChannel ch) {
      this.ch = ch;
    }

    /** Connects to {@code socket}: an IOException here means no node answers there. */
    public static Call open(Path socket) throws IOException {
      SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX);
      try {
        ch.connect(UnixDomainSocketAddress.of(socket));
        return new Call(ch);
      } catch (IOException | RuntimeException e) {
        ch.close();
        throw e;
      }
    }

    /** Sends {@code request}, copies the answer to {@code out}, returns the node's status. */
    public int send(String request, PrintStream out) throws IOException {
      ch.write(ByteBuffer.wrap((request + "\n").getBytes(StandardCharsets.UTF_8)));
      BufferedReader in = new BufferedReader(
          new InputStreamReader(Channels.newInputStream(ch), StandardCharsets.UTF_8));
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        if (line.startsWith(ControlServer.END)) {
          return Integer.parseInt(line.substring(ControlServer.END.length()).trim());
        }
        out.println(line);
      }
      throw new IOException("the node closed its control socket without an answer");
    }

    @Override
    public void close() throws IOException {
      ch.close();
    }
  }

  /**
   * A node's answer.
   *
   * @param status its exit status
   * @param output what it printed
   */
  public record Answer(int status, String output) {}
}

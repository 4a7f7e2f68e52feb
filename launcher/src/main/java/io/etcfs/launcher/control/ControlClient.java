package io.etcfs.launcher.control;

import io.etcfs.launcher.UserError;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
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
    try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
      ch.connect(UnixDomainSocketAddress.of(socket));
      ch.write(java.nio.ByteBuffer.wrap((request + "\n").getBytes(StandardCharsets.UTF_8)));
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
  }

  /** Like {@link #call} but collects the answer; the status is the first element. */
  public static Answer ask(Path socket, String request) throws IOException {
    java.io.ByteArrayOutputStream buf = new java.io.ByteArrayOutputStream();
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
   * A node's answer.
   *
   * @param status its exit status
   * @param output what it printed
   */
  public record Answer(int status, String output) {}
}

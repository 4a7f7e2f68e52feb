package io.etcfs.launcher.cli;

import io.etcfs.launcher.UserError;
import io.etcfs.launcher.control.ControlClient;
import io.etcfs.launcher.node.NodeSpec;
import io.etcfs.spi.shell.Candidate;
import io.etcfs.spi.shell.Completion;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The shell's link to one node: runs command lines over its control socket, one connection per
 * line, and can abandon the line in flight (Ctrl-C) without touching the node.
 */
final class NodeLink {
  /** The exit status of a line the user stopped waiting for, as a shell reports SIGINT. */
  static final int INTERRUPTED = 130;

  private final NodeSpec spec;
  private final AtomicReference<ControlClient.Call> inFlight = new AtomicReference<>();
  private volatile boolean abandoned;

  NodeLink(NodeSpec spec) {
    this.spec = spec;
  }

  String nodeName() {
    return spec.nodeName();
  }

  /**
   * Runs {@code line} in the node's Gogo session and copies its output to {@code out}.
   *
   * @return the command's status, or {@link #INTERRUPTED} if {@link #abandon} was called
   * @throws UserError if the node is not running
   */
  int exec(String line, PrintStream out) {
    return request("exec " + line, out);
  }

  /** Every command the node knows, {@code scope:function}; empty if it cannot list them. */
  List<String> commands() {
    Answer a = ask("commands");
    return a.status() == 0 ? a.output().lines().filter(l -> !l.isBlank()).toList() : List.of();
  }

  /**
   * What the word at {@code index} of {@code words} can become, as the node's shell bundle
   * answers it ({@code etcfs:_candidates}, in the SPI's wire form: {@link Completion#encodeWord},
   * {@link Candidate#line()}); empty if the node cannot answer.
   */
  List<Candidate> complete(List<String> words, int index) {
    StringBuilder line = new StringBuilder("exec etcfs:_candidates ").append(index);
    for (String w : words) {
      line.append(' ').append(Completion.encodeWord(w));
    }
    Answer a = ask(line.toString());
    if (a.status() != 0) {
      return List.of();
    }
    return a.output().lines().map(Candidate::parseLine).flatMap(java.util.Optional::stream)
        .toList();
  }

  /**
   * Stops waiting for the line in flight (called from the Ctrl-C handler): its connection is
   * closed, the node finishes the command on its own and finds nobody to answer.
   */
  void abandon() {
    ControlClient.Call c = inFlight.get();
    if (c != null) {
      abandoned = true;
      try {
        c.close();
      } catch (IOException e) {
        // Closing a socket we are leaving anyway: nothing to do about it.
      }
    }
  }

  /** Checks that the node answers at all, before the shell shows a prompt. */
  void requireRunning() {
    Answer a = ask("health");
    if (a.status() != 0 && a.output().isBlank()) {
      throw notRunning("no answer to health");
    }
  }

  private Answer ask(String request) {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    int status;
    try (PrintStream ps = new PrintStream(buf, true, StandardCharsets.UTF_8)) {
      status = request(request, ps);
    }
    return new Answer(status, buf.toString(StandardCharsets.UTF_8));
  }

  private int request(String request, PrintStream out) {
    ControlClient.Call call;
    try {
      call = ControlClient.Call.open(spec.socket());
    } catch (IOException e) {
      throw notRunning(reason(e));
    }
    abandoned = false;
    inFlight.set(call);
    try (call) {
      return call.send(request, out);
    } catch (IOException e) {
      if (abandoned) {
        return INTERRUPTED;
      }
      throw new UserError("node " + spec.nodeName() + " at " + spec.socket()
          + " went away during the command (" + reason(e) + ")", e);
    } finally {
      inFlight.set(null);
    }
  }

  /** The user's one line for a node that does not answer: no node, or a socket left by a dead one. */
  UserError notRunning(String reason) {
    return new UserError("node " + spec.nodeName() + " at " + spec.socket() + " is not running ("
        + reason + ")");
  }

  private static String reason(IOException e) {
    String m = e.getMessage();
    if (e instanceof java.net.SocketException && m != null && m.contains("No such file")) {
      return "no control socket";
    }
    if (m == null || m.isBlank()) {
      return e.getClass().getSimpleName();
    }
    return Character.toLowerCase(m.charAt(0)) + m.substring(1);
  }

  /** An answer collected whole, for the shell's own look-ups. */
  private record Answer(int status, String output) {}
}

package io.etcfs.launcher.control;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * Watches a control client while its request runs: a client sends nothing after its request
 * line, so end of stream means it went away (Ctrl-C in {@code etcfs shell}), and the request's
 * thread is interrupted so that a long command ({@code sleep}, a watch) does not run on for
 * nobody. The interrupt is delivered only while the request runs, never after.
 */
final class ClientWatch {
  private final Thread request;
  private final SocketChannel client;
  private boolean running = true;
  private boolean gone;

  private ClientWatch(Thread request, SocketChannel client) {
    this.request = request;
    this.client = client;
  }

  /** Starts watching {@code client} on behalf of the calling thread. */
  static ClientWatch start(SocketChannel client) {
    ClientWatch w = new ClientWatch(Thread.currentThread(), client);
    Thread t = new Thread(w::watch, "etcfs-control-watch");
    t.setDaemon(true);
    t.start();
    return w;
  }

  private void watch() {
    try {
      ByteBuffer b = ByteBuffer.allocate(64);
      while (client.read(b) >= 0) {
        b.clear();
      }
    } catch (IOException e) {
      // Closed under us (the answer was sent) or reset by the client: either way, done.
    }
    clientGone();
  }

  private synchronized void clientGone() {
    gone = true;
    if (running) {
      request.interrupt();
    }
  }

  /**
   * Ends the watch when the request returns; clears an interrupt this watch delivered.
   *
   * @return true if the client went away, so there is nobody to answer
   */
  synchronized boolean finish() {
    running = false;
    if (gone) {
      Thread.interrupted();
    }
    return gone;
  }
}

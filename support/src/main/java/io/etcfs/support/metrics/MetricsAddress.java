package io.etcfs.support.metrics;

import java.net.InetSocketAddress;

/** {@code HOST:PORT} (or {@code [V6]:PORT}) of a metrics endpoint. */
public final class MetricsAddress {
  private MetricsAddress() {}

  /**
   * The address {@code text} names, not resolved beyond what the JDK does for a literal.
   *
   * @throws IllegalArgumentException in one line naming what is wrong
   */
  public static InetSocketAddress parse(String text) {
    int colon = text.lastIndexOf(':');
    if (colon <= 0 || colon == text.length() - 1) {
      throw new IllegalArgumentException("metrics address '" + text + "' is not HOST:PORT");
    }
    String host = text.substring(0, colon);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    int port;
    try {
      port = Integer.parseInt(text.substring(colon + 1));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("metrics address '" + text + "': port '"
          + text.substring(colon + 1) + "' is not a number");
    }
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException("metrics address '" + text + "': port " + port
          + " is not between 1 and 65535");
    }
    return new InetSocketAddress(host, port);
  }
}

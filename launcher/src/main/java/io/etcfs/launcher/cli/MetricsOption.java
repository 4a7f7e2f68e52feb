package io.etcfs.launcher.cli;

import io.etcfs.launcher.UserError;
import io.etcfs.launcher.node.NodeSpec;
import io.etcfs.support.metrics.MetricsAddress;
import java.net.InetSocketAddress;
import picocli.CommandLine.Option;

/** {@code --metrics HOST:PORT} and {@code --metrics-required}: the node's Prometheus endpoint. */
final class MetricsOption {
  @Option(names = "--metrics", paramLabel = "HOST:PORT",
      description = "Serve Prometheus metrics on http://HOST:PORT/metrics (default: none). With"
          + " etcfs up, the first node's; node N takes PORT+N-1.")
  String address;

  @Option(names = "--metrics-required",
      description = "Refuse to start a node whose metrics address cannot be bound (default: the"
          + " node starts without metrics and logs one line).")
  boolean required;

  /** The endpoint of the {@code index}th node (0 for the first, and for {@code mount}). */
  NodeSpec.Metrics spec(int index) {
    if (address == null) {
      if (required) {
        throw new UserError("--metrics-required needs --metrics HOST:PORT");
      }
      return NodeSpec.Metrics.NONE;
    }
    InetSocketAddress a;
    try {
      a = MetricsAddress.parse(address);
    } catch (IllegalArgumentException e) {
      throw new UserError(e.getMessage());
    }
    int port = a.getPort() + index;
    if (port > 65535) {
      throw new UserError("--metrics " + address + ": node " + (index + 1) + " would need port "
          + port);
    }
    String host = address.substring(0, address.lastIndexOf(':'));
    return new NodeSpec.Metrics(host + ":" + port, required);
  }
}

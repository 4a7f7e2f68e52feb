package io.etcfs.core.metrics;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.etcfs.spi.metrics.MetricSource;
import io.etcfs.support.metrics.MetricsAddress;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.metatype.annotations.Designate;

/**
 * Serves the node's metrics in Prometheus' text format on {@code GET /metrics}, from every
 * {@link MetricSource} registered in the framework (the core's engine, the etcd client, fencing),
 * each asked at the scrape. Exists only when configured ({@code --metrics}). An address that
 * cannot be bound is one logged line and no endpoint, or, with {@code required}, the
 * component's failure, which ends the node's start with that line.
 */
@Component(configurationPid = "io.etcfs.metrics",
    configurationPolicy = ConfigurationPolicy.REQUIRE, immediate = true,
    service = MetricsEndpoint.class)
@Designate(ocd = MetricsConfig.class)
public final class MetricsEndpoint {
  private static final Logger LOG = Logger.getLogger(MetricsEndpoint.class.getName());
  static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

  private final List<MetricSource> sources = new CopyOnWriteArrayList<>();
  private final HttpServer server;
  private final ExecutorService executor;

  @Activate
  public MetricsEndpoint(MetricsConfig config) {
    InetSocketAddress address = MetricsAddress.parse(config.address());
    HttpServer bound;
    try {
      bound = HttpServer.create(address, 16);
    } catch (IOException | RuntimeException e) {
      // in use, not an address of this host, a name that does not resolve: the same one line
      String line = "metrics address " + config.address() + " cannot be bound: "
          + (e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName());
      if (config.required()) {
        throw new IllegalStateException(line);
      }
      LOG.warning(line + "; this node serves no metrics");
      this.server = null;
      this.executor = null;
      return;
    }
    this.server = bound;
    // one thread: scrapes are rare and each reads counters only
    this.executor = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "etcfs-metrics");
      t.setDaemon(true);
      return t;
    });
    server.createContext("/metrics", this::serve);
    server.setExecutor(executor);
    server.start();
    LOG.info("metrics on http://" + config.address() + "/metrics");
  }

  @Deactivate
  void deactivate() {
    if (server != null) {
      server.stop(0);
      executor.shutdownNow();
    }
  }

  @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC)
  void addSource(MetricSource source) {
    sources.add(source);
  }

  void removeSource(MetricSource source) {
    sources.remove(source);
  }

  /** One scrape: every source's values, in one text. */
  String scrape() {
    Exposition out = new Exposition();
    for (MetricSource s : sources) {
      try {
        s.collect(out);
      } catch (RuntimeException e) {
        // one broken source must not take the others' metrics with it
        LOG.log(Level.WARNING, "metrics source " + s.getClass().getName() + " failed", e);
      }
    }
    return out.text();
  }

  private void serve(HttpExchange x) throws IOException {
    try (x) {
      if (!x.getRequestMethod().equals("GET") && !x.getRequestMethod().equals("HEAD")) {
        x.sendResponseHeaders(405, -1);
        return;
      }
      byte[] body = scrape().getBytes(StandardCharsets.UTF_8);
      x.getResponseHeaders().set("Content-Type", CONTENT_TYPE);
      boolean head = x.getRequestMethod().equals("HEAD");
      x.sendResponseHeaders(200, head ? -1 : body.length);
      if (!head) {
        try (OutputStream o = x.getResponseBody()) {
          o.write(body);
        }
      }
    }
  }
}

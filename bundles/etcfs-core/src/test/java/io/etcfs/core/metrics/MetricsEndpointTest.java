package io.etcfs.core.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.testing.ComponentConfigs;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The endpoint over HTTP, and an address that cannot be bound, required or not. */
@Timeout(30)
class MetricsEndpointTest {
  private static MetricsConfig config(String address, boolean required) {
    return ComponentConfigs.of(MetricsConfig.class, Map.of("address", address, "required",
        required));
  }

  private static int freePort() throws Exception {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  @Test
  void servesEverySourceAtEachScrapeAndSurvivesABrokenOne() throws Exception {
    int port = freePort();
    MetricsEndpoint e = new MetricsEndpoint(config("127.0.0.1:" + port, true));
    try {
      long[] n = {0};
      e.addSource(out -> out.counter("etcfs_a_total", "As", ++n[0]));
      e.addSource(out -> {
        throw new IllegalStateException("broken");
      });
      e.addSource(out -> out.gauge("etcfs_b", "B", 7));
      HttpClient http = HttpClient.newHttpClient();
      HttpRequest get = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
          + "/metrics")).timeout(Duration.ofSeconds(10)).build();
      HttpResponse<String> r = http.send(get, HttpResponse.BodyHandlers.ofString());
      assertEquals(200, r.statusCode());
      assertEquals(MetricsEndpoint.CONTENT_TYPE, r.headers().firstValue("Content-Type")
          .orElseThrow());
      assertTrue(r.body().contains("etcfs_a_total 1\n") && r.body().contains("etcfs_b 7\n"),
          r.body());
      r = http.send(get, HttpResponse.BodyHandlers.ofString());
      assertTrue(r.body().contains("etcfs_a_total 2\n"), r.body());
      HttpResponse<String> other = http.send(HttpRequest.newBuilder(URI.create(
          "http://127.0.0.1:" + port + "/")).build(), HttpResponse.BodyHandlers.ofString());
      assertEquals(404, other.statusCode());
    } finally {
      e.deactivate();
    }
  }

  @Test
  void anAddressInUseIsOneLineWhenRequiredAndNoEndpointOtherwise() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      String address = "127.0.0.1:" + taken.getLocalPort();
      IllegalStateException e = assertThrows(IllegalStateException.class,
          () -> new MetricsEndpoint(config(address, true)));
      assertTrue(e.getMessage().startsWith("metrics address " + address + " cannot be bound"),
          e.getMessage());
      assertEquals(1, e.getMessage().lines().count());
      new MetricsEndpoint(config(address, false)).deactivate(); // starts, serves nothing
    }
  }

  @Test
  void aMalformedAddressIsOneLine() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> new MetricsEndpoint(config("localhost", false)));
    assertEquals("metrics address 'localhost' is not HOST:PORT", e.getMessage());
  }
}

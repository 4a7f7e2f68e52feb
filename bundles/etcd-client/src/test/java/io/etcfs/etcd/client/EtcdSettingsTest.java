package io.etcfs.etcd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 10, unit = TimeUnit.SECONDS)
class EtcdSettingsTest {

  @Test
  void parsesACommaSeparatedList() {
    assertEquals(List.of("http://127.0.0.1:2379", "https://etcd-1.example:2379"),
        EtcdSettings.parseEndpoints(" http://127.0.0.1:2379, https://etcd-1.example:2379/ ,"));
  }

  @Test
  void rejectsBadEndpointsWithOneLine() {
    for (String bad : List.of("127.0.0.1:2379", "ftp://h:1", "http://h", "http://:2379",
        "http://h:2379/v3", "")) {
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> EtcdSettings.parseEndpoints(bad));
      assertFalse(e.getMessage().contains("\n"), e.getMessage());
      assertTrue(bad.isEmpty() || e.getMessage().contains(bad), e.getMessage());
    }
  }

  @Test
  void namesWhatIsWrongWithTheEndpoint() {
    assertEquals(Map.of(
        "http://127.0.0.1:37635x", "bad port '37635x'",
        "http://etcd-1.example:2379a", "bad port '2379a'",
        "http://127.0.0.1:", "no port",
        "http://127.0.0.1", "no port",
        "http://127.0.0.1:0", "bad port '0' (1 to 65535)",
        "http://127.0.0.1:99999", "bad port '99999' (1 to 65535)",
        "http://:2379", "no host",
        "http://[::1]:23x", "bad port '23x'",
        "http://etc_d:2379", "bad host 'etc_d'"),
        Map.ofEntries(Stream.of("http://127.0.0.1:37635x", "http://etcd-1.example:2379a",
            "http://127.0.0.1:", "http://127.0.0.1", "http://127.0.0.1:0",
            "http://127.0.0.1:99999", "http://:2379", "http://[::1]:23x", "http://etc_d:2379")
            .map(bad -> Map.entry(bad, why(bad))).toArray(Map.Entry[]::new)));
    assertEquals("bad etcd endpoint 'http://127.0.0.1:37635x': bad port '37635x' (expected "
            + "http(s)://host:port)",
        assertThrows(IllegalArgumentException.class,
            () -> EtcdSettings.parseEndpoints("http://127.0.0.1:37635x")).getMessage());
    assertEquals(List.of("http://[::1]:2379"), EtcdSettings.parseEndpoints("http://[::1]:2379"));
    assertEquals("not a URL", why("http://h:2379/a b"));
  }

  /** The reason part of the message, between the endpoint and the expected form. */
  private static String why(String bad) {
    String m = assertThrows(IllegalArgumentException.class,
        () -> EtcdSettings.parseEndpoints(bad)).getMessage();
    String head = "bad etcd endpoint '" + bad + "': ";
    String tail = " (expected http(s)://host:port)";
    assertTrue(m.startsWith(head) && m.endsWith(tail), m);
    return m.substring(head.length(), m.length() - tail.length());
  }

  @Test
  void tlsWhenCaFileOrHttps() {
    assertFalse(EtcdSettings.of("http://h:1").tls());
    assertTrue(EtcdSettings.of("https://h:1").tls());
  }

  @Test
  void toStringHidesThePassword() {
    String text = EtcdSettings.of("http://h:1").withCredentials("bob", "secret").toString();
    assertFalse(text.contains("secret"), text);
  }
}

package io.etcfs.etcd.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.TimeUnit;
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

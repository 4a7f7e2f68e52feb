package io.etcfs.support.shell;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class JsonTest {
  @Test
  void valuesAreSpelledOnceForEveryCommand() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("name", "a \"b\"\n\u0001");
    m.put("size", 42L);
    m.put("ok", true);
    m.put("none", null);
    m.put("nan", Double.NaN);
    m.put("rows", new Json.Raw("[1, 2]"));
    assertEquals("{\"name\": \"a \\\"b\\\"\\n\\u0001\", \"size\": 42, \"ok\": true, "
        + "\"none\": null, \"nan\": \"NaN\", \"rows\": [1, 2]}", Json.object(m));
  }
}

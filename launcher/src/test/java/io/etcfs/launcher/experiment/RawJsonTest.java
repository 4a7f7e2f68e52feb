package io.etcfs.launcher.experiment;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(10)
class RawJsonTest {
  @TempDir Path tmp;

  /** Reads JSON into maps, lists, strings, numbers and booleans (Jackson's streaming parser). */
  static Object parse(String json) throws IOException {
    try (JsonParser p = new JsonFactory().createParser(json)) {
      p.nextToken();
      Object v = value(p);
      assertEquals(null, p.nextToken(), "nothing after the document");
      return v;
    }
  }

  private static Object value(JsonParser p) throws IOException {
    JsonToken t = p.currentToken();
    switch (t) {
      case START_OBJECT -> {
        Map<String, Object> m = new LinkedHashMap<>();
        while (p.nextToken() == JsonToken.FIELD_NAME) {
          String name = p.currentName();
          p.nextToken();
          m.put(name, value(p));
        }
        return m;
      }
      case START_ARRAY -> {
        List<Object> l = new ArrayList<>();
        while (p.nextToken() != JsonToken.END_ARRAY) {
          l.add(value(p));
        }
        return l;
      }
      case VALUE_STRING -> {
        return p.getText();
      }
      case VALUE_NUMBER_INT -> {
        return p.getLongValue();
      }
      case VALUE_NUMBER_FLOAT -> {
        return p.getDoubleValue();
      }
      case VALUE_TRUE, VALUE_FALSE -> {
        return p.getBooleanValue();
      }
      default -> throw new IOException("unexpected " + t);
    }
  }

  @SuppressWarnings("unchecked")
  private static <T> T at(Object o, Object... path) {
    for (Object k : path) {
      o = k instanceof String s ? ((Map<String, Object>) o).get(s) : ((List<Object>) o).get((int) k);
    }
    return (T) o;
  }

  @Test
  void everySampleSegmentLatencyAndSwitchIsWrittenAndReadsBack() throws Exception {
    Results r = Fixture.results();
    Path file = tmp.resolve("raw.json");
    RawJson.write(r, file);
    Object doc = parse(Files.readString(file));
    assertEquals("handoff", at(doc, "spec", "workload"));
    assertEquals(List.of("etcd/arena", "hazelcast/arena"), at(doc, "spec", "strategies"));
    assertEquals(List.of(1L, 2L), at(doc, "spec", "active"));
    assertEquals(1000L, (long) at(doc, "spec", "phaseMillis"));
    assertEquals(r.spec.text(), at(doc, "spec", "text"));
    assertEquals("host", at(doc, "machine", "host"));
    assertEquals(2L, (long) at(doc, "machine", "cores"));
    List<Object> runs = at(doc, "runs");
    assertEquals(2, runs.size());
    for (int i = 0; i < 2; i++) {
      Results.Run run = r.runs.get(i);
      assertEquals(run.samples.size(), ((List<?>) at(doc, "runs", i, "samples")).size());
      assertEquals(run.segments.size(), ((List<?>) at(doc, "runs", i, "segments")).size());
      assertEquals(run.latencies.size(), ((List<?>) at(doc, "runs", i, "latencies")).size());
      assertEquals(1, ((List<?>) at(doc, "runs", i, "switches")).size());
    }
    // run 2, its first phase: 120 operations, 30 a quarter second
    assertEquals(List.of(120L, 0L), at(doc, "runs", 1, "segments", 0, "ops"));
    assertEquals(120.0, (double) at(doc, "runs", 1, "segments", 0, "opsPerSecond"));
    assertEquals(3.0, (double) at(doc, "runs", 1, "segments", 0, "loadAverage"));
    assertEquals(List.of(30L, 0L), at(doc, "runs", 1, "samples", 0, "ops"));
    assertEquals("hazelcast/arena", at(doc, "runs", 1, "switches", 0, "to"));
    assertEquals(true, at(doc, "runs", 1, "switches", 0, "live"));
    assertEquals(270L, (long) at(doc, "runs", 1, "switches", 0, "pauseMillis"));
    assertEquals(3.0, (double) at(doc, "runs", 0, "latencies", 0, "millis"));
    assertEquals(List.of("a note \"quoted\"\nover two lines"), at(doc, "runs", 1, "notes"));
  }

  @Test
  void controlCharactersAreEscaped() throws Exception {
    Results r = Fixture.results();
    r.runs.get(0).notes.add("tab\there, bell\u0007, back\\slash");
    Object doc = parse(RawJson.of(r));
    assertEquals("tab\there, bell\u0007, back\\slash", at(doc, "runs", 0, "notes", 0));
  }
}

package io.etcfs.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code etcfs experiment} from the tarball, on the local cluster it starts itself: two lock
 * backends, then the other allocator, one run, a few seconds a phase. The report, the raw JSON
 * and both plots are written; every strategy completed operations; each change was one live
 * switch (the lock backend's, then the allocator's) whose pause the nodes recorded; and the
 * cluster is stopped afterwards.
 */
@Timeout(240)
class ExperimentIT {
  @TempDir Path tmp;

  @Test
  void aTwoStrategyExperimentSwitchesLiveAndWritesItsReport() throws Exception {
    Path spec = Files.writeString(tmp.resolve("tiny.spec"), """
        # the smallest comparison: the lock backend, then the allocator, switched live under
        # two appending nodes
        workload = shared-writers
        strategies = etcd/arena hazelcast/arena hazelcast/shared
        nodes = 2
        active = 2
        runs = 1
        phase = 4s
        warmup = 1s
        size = 1G
        """);
    Path out = tmp.resolve("out");
    Path rt = Files.createDirectories(tmp.resolve("rt"));
    Path stdout = tmp.resolve("stdout.txt");
    Path stderr = tmp.resolve("stderr.txt");
    Process p = Distribution.command(rt, Map.of(), "experiment", spec.toString(), "--out",
        out.toString()).redirectOutput(stdout.toFile()).redirectError(stderr.toFile()).start();
    try {
      boolean done = p.waitFor(200, TimeUnit.SECONDS);
      String said = "--- stdout\n" + Files.readString(stdout) + "--- stderr\n"
          + Files.readString(stderr);
      assertTrue(done, "etcfs experiment did not finish within 200 s\n" + said);
      assertEquals(0, p.exitValue(), said);
      // progress on stderr: which run, strategy and phase, elapsed and what is left
      assertTrue(said.contains("experiment: run 1/1: hazelcast/arena, 2 nodes driving: 4 s phase"
          + " (elapsed "), said);
      assertTrue(said.contains(" left)"), said);

      Map<String, Object> raw = object(Files.readString(out.resolve("raw.json")));
      List<Object> runs = list(raw.get("runs"));
      assertEquals(1, runs.size());
      Map<String, Object> run = object(runs.get(0));
      Map<Long, String> phaseOf = new HashMap<>();
      for (Object o : list(run.get("segments"))) {
        Map<String, Object> s = object(o);
        if (s.get("kind").equals("phase")) {
          phaseOf.put((Long) s.get("seq"), (String) s.get("strategy"));
        }
      }
      assertEquals(3, phaseOf.size(), "one phase per strategy: " + run.get("segments"));
      Map<String, Long> ops = new HashMap<>();
      for (Object o : list(run.get("samples"))) {
        Map<String, Object> sample = object(o);
        String strategy = phaseOf.get((Long) sample.get("segment"));
        if (strategy != null) {
          for (Object n : list(sample.get("ops"))) {
            ops.merge(strategy, (Long) n, Long::sum);
          }
        }
      }
      assertTrue(ops.getOrDefault("etcd/arena", 0L) > 0, "samples of etcd/arena: " + ops);
      assertTrue(ops.getOrDefault("hazelcast/arena", 0L) > 0, "samples of hazelcast/arena: "
          + ops);
      assertTrue(ops.getOrDefault("hazelcast/shared", 0L) > 0, "samples of hazelcast/shared: "
          + ops);

      List<Object> switches = list(run.get("switches"));
      assertEquals(2, switches.size(), switches.toString());
      String[][] expected = {{"lock", "etcd", "hazelcast"}, {"alloc", "arena", "shared"}};
      String report = Files.readString(out.resolve("report.md"), StandardCharsets.UTF_8);
      assertTrue(report.contains(
          "| figure | etcd/arena | hazelcast/arena | ÷ | hazelcast/shared | ÷ |"), report);
      assertTrue(report.contains("| operations/s, 2 nodes driving | "), report);
      for (int i = 0; i < 2; i++) {
        Map<String, Object> w = object(switches.get(i));
        assertEquals(expected[i][0], w.get("kind"), w.toString());
        assertEquals(expected[i][2], w.get("toName"), w.toString());
        assertEquals(true, w.get("live"), w.toString());
        long pause = (Long) w.get("pauseMillis");
        assertTrue(pause >= 0 && pause < 60_000, w.toString());
        assertTrue((Long) w.get("firstStop") > 0 && (Long) w.get("cutover")
            >= (Long) w.get("firstStop"), w.toString());
        assertTrue(report.contains("| 1 | " + expected[i][0] + " | " + expected[i][1] + " → "
            + expected[i][2] + " | live, switch " + w.get("epoch") + " | " + pause + " | "),
            report);
      }
      assertTrue(report.contains(Runtime.getRuntime().availableProcessors() + " cores"), report);

      for (String png : List.of("throughput.png", "scaling.png")) {
        BufferedImage img = ImageIO.read(out.resolve(png).toFile());
        assertEquals(1200, img.getWidth(), png);
        assertEquals(600, img.getHeight(), png);
      }
      // the cluster it started is down again: no mount left, no node running
      String mounts = Files.readString(Path.of("/proc/self/mountinfo"));
      for (int n = 1; n <= 2; n++) {
        assertFalse(mounts.contains(" " + out.resolve("cluster/mnt/node" + n) + " "),
            "node" + n + " is still mounted");
      }
    } finally {
      if (p.isAlive()) {
        p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
      Processes.killAll(out.resolve("cluster"));
      for (int n = 1; n <= 2; n++) {
        LocalCluster.unmountQuietly(out.resolve("cluster/mnt/node" + n));
      }
    }
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> object(Object o) {
    return (Map<String, Object>) o;
  }

  @SuppressWarnings("unchecked")
  private static List<Object> list(Object o) {
    return (List<Object>) o;
  }

  private static Map<String, Object> object(String json) throws IOException {
    try (JsonParser p = new JsonFactory().createParser(json)) {
      p.nextToken();
      return object(value(p));
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
}

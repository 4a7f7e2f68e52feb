package io.etcfs.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue #16, metrics: a real two-node cluster started with {@code --metrics}, file work through
 * its mounts, then each node scraped: {@code promtool check metrics} passes on what it serves,
 * the counters moved as the work implies, the shipped Grafana dashboard queries only metrics a
 * node exports, and {@code etcfs top --once} shows both nodes. Then the bad input: a metrics
 * address already in use (the node starts and logs one line; with {@code --metrics-required} it
 * refuses in one line), and bad {@code --metrics}/{@code top} arguments.
 */
@Timeout(600)
class MetricsIT {
  private static final Duration T = Duration.ofSeconds(60);
  private static final HttpClient HTTP = HttpClient.newBuilder()
      .connectTimeout(Duration.ofSeconds(5)).build();
  private static final Pattern SAMPLE =
      Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{[^}]*\\})? (\\S+)$");

  @TempDir static Path tmp;
  static LocalCluster cluster;
  static int port;

  @BeforeAll
  static void up() throws Exception {
    port = freePorts(2);
    cluster = LocalCluster.up(tmp.resolve("c"), 2, "1G", Map.of(), "--metrics",
        "127.0.0.1:" + port);
  }

  @AfterAll
  static void down() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void aLiveNodesMetricsPassPromtoolAndMoveWithTheWork() throws Exception {
    String before1 = awaitScrape(port);
    String before2 = awaitScrape(port + 1);
    Path a = cluster.mount(1).resolve("metrics-a.bin");
    byte[] data = new byte[8 << 20];
    new java.util.Random(16).nextBytes(data);
    try (FileChannel ch = FileChannel.open(a, StandardOpenOption.CREATE,
        StandardOpenOption.WRITE)) {
      ch.write(ByteBuffer.wrap(data));
      ch.force(true);
    }
    for (int i = 0; i < 20; i++) {
      Files.writeString(cluster.mount(1).resolve("small-" + i), "file " + i);
    }
    assertFalse(Files.exists(cluster.mount(1).resolve("no-such-file"))); // a lookup's ENOENT
    // node2 reads what node1 wrote (from the device), then appends to it: node1's lock is
    // recalled whatever mode it kept
    assertEquals(data.length, Files.readAllBytes(cluster.mount(2).resolve("metrics-a.bin")).length);
    Files.writeString(cluster.mount(2).resolve("metrics-a.bin"), "tail",
        StandardOpenOption.APPEND);

    String after1 = awaitScrape(port);
    String after2 = awaitScrape(port + 1);
    for (String text : List.of(after1, after2)) {
      promtool(text);
    }
    Map<String, Double> b1 = samples(before1);
    Map<String, Double> a1 = samples(after1);
    Map<String, Double> b2 = samples(before2);
    Map<String, Double> a2 = samples(after2);
    assertTrue(grew(b1, a1, "etcfs_fuse_op_duration_seconds_count{op=\"write\"}") >= 1, after1);
    assertTrue(grew(b1, a1, "etcfs_fuse_op_duration_seconds_count{op=\"create\"}") >= 20,
        after1);
    assertTrue(grew(b1, a1, "etcfs_device_written_bytes_total") >= data.length, after1);
    assertTrue(grew(b2, a2, "etcfs_device_read_bytes_total") >= data.length, after2);
    assertTrue(grew(b1, a1, "etcfs_etcd_request_duration_seconds_count{kind=\"txn\"}") >= 1,
        after1);
    assertTrue(grew(b1, a1, "etcfs_fuse_op_errors_total{op=\"lookup\",errno=\"ENOENT\"}") >= 1,
        after1);
    assertTrue(grew(b1, a1, "etcfs_lock_recall_handover_seconds_count") >= 1, after1);
    assertTrue(grew(b2, a2, "etcfs_lock_wait_seconds_count") >= 1, after2);
    String lock = strategy("lock", "etcd");
    String alloc = strategy("alloc", "arena");
    assertTrue(after1.contains("etcfs_node_info{fs=\"etcfs\",node=\"node1\",lock_backend=\""
        + lock + "\",allocator=\"" + alloc + "\"} 1"), after1);
    assertTrue(after2.contains("node=\"node2\""), after2);
    double left = a1.get("etcfs_membership_lease_remaining_seconds");
    assertTrue(left > 0 && left <= 10, "lease left " + left);
    awaitMembers(port, 2);
    awaitMembers(port + 1, 2);
  }

  @Test
  void theDashboardQueriesOnlyMetricsANodeExports() throws Exception {
    JsonObject dash = JsonParser.parseString(Files.readString(Distribution.home()
        .resolve("etc/grafana/etcfs.json"))).getAsJsonObject();
    assertEquals("etcfs", dash.get("title").getAsString());
    Set<String> queried = new TreeSet<>();
    List<String> titles = new java.util.ArrayList<>();
    for (JsonElement p : dash.getAsJsonArray("panels")) {
      titles.add(p.getAsJsonObject().get("title").getAsString());
      for (JsonElement t : p.getAsJsonObject().getAsJsonArray("targets")) {
        queried.addAll(names(t.getAsJsonObject().get("expr").getAsString()));
      }
    }
    for (JsonElement v : dash.getAsJsonObject("templating").getAsJsonArray("list")) {
      queried.addAll(names(v.getAsJsonObject().get("query").getAsString()));
    }
    for (String headline : List.of("Operations per second", "latency", "Errors", "etcd latency",
        "Lock waits and recalls", "Device throughput", "lease time left")) {
      assertTrue(titles.stream().anyMatch(t -> t.contains(headline)), headline + " in " + titles);
    }
    // a node exports an errno's counter once that error happened: make one on each node
    for (int node = 1; node <= 2; node++) {
      assertFalse(Files.exists(cluster.mount(node).resolve("dashboard-probe-" + node)));
    }
    assertTrue(queried.size() >= 10, queried.toString());
    // some appear only once counted: etcfs_members after the node's first recovery scan (2 s)
    long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
    Set<String> missing;
    while (true) {
      Set<String> exported = new TreeSet<>();
      for (int p : List.of(port, port + 1)) {
        for (String key : samples(awaitScrape(p)).keySet()) {
          exported.add(key.replaceAll("\\{.*", ""));
        }
      }
      missing = new TreeSet<>(queried);
      missing.removeAll(exported);
      if (missing.isEmpty() || System.nanoTime() > deadline) {
        break;
      }
      Thread.sleep(250);
    }
    assertTrue(missing.isEmpty(), "queried but not exported within 30 s: " + missing);
  }

  @Test
  void topShowsEveryNodeOnce() throws Exception {
    Files.writeString(cluster.mount(1).resolve("top-probe"), "x");
    Distribution.Result r = cluster.etcfs("top", "--dir", cluster.dir().toString(), "--once",
        "--interval", "1");
    assertEquals(0, r.exit(), r.toString());
    List<String> lines = r.out().lines().toList();
    assertTrue(lines.get(0).startsWith("etcfs top - "), r.toString());
    assertTrue(lines.stream().anyMatch(l -> l.startsWith("NODE ") && l.contains("OPS/S")), r.out());
    String backends = strategy("lock", "etcd") + "/" + strategy("alloc", "arena");
    for (String node : List.of("node1", "node2")) {
      assertTrue(lines.stream().anyMatch(l -> l.startsWith(node + " ") && l.endsWith(backends)),
          node + " row in\n" + r.out());
    }
  }

  @Test
  void badTopAndMetricsArgumentsAreOneLine() throws Exception {
    Distribution.Result r = cluster.etcfs("top", "--dir", cluster.dir().toString(), "--once",
        "--interval", "0");
    assertOneLine(r, "--interval must be between");
    r = cluster.etcfs("top", "--dir", tmp.resolve("nowhere").toString(), "--once");
    assertOneLine(r, "no local cluster");
    r = cluster.etcfs("up", "--nodes", "1", "--dir", tmp.resolve("bad").toString(),
        "--metrics", "localhost");
    assertOneLine(r, "metrics address 'localhost' is not HOST:PORT");
    r = cluster.etcfs("up", "--nodes", "1", "--dir", tmp.resolve("bad").toString(),
        "--metrics-required");
    assertOneLine(r, "--metrics-required needs --metrics");
  }

  @Test
  void anAddressInUseIsOneLogLineByDefaultAndARefusalWhenRequired() throws Exception {
    try (ServerSocket taken = new ServerSocket()) {
      taken.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      String address = "127.0.0.1:" + taken.getLocalPort();
      try (LocalCluster c = LocalCluster.up(tmp.resolve("inuse"), 1, "1G", Map.of(),
          "--metrics", address)) {
        Path log = c.dir().resolve("log/node1.log");
        List<String> lines = Files.readAllLines(log).stream()
            .filter(l -> l.contains(address)).toList();
        assertEquals(1, lines.size(), "lines naming " + address + ": " + lines);
        assertTrue(lines.get(0).contains("cannot be bound") && lines.get(0).contains("WARNING"),
            lines.get(0));
        assertFalse(Files.readString(log).contains("\tat "), "a stack trace in " + log);
        Files.writeString(c.mount(1).resolve("works"), "yes"); // the node serves its mount
      }
      Path dir = tmp.resolve("required");
      Path runtime = Files.createDirectories(tmp.resolve("rt-required"));
      Distribution.Result r;
      try {
        r = Distribution.etcfs(runtime, Duration.ofSeconds(240), "up",
            "--nodes", "1", "--dir", dir.toString(), "--size", "1G", "--metrics", address,
            "--metrics-required");
      } finally {
        Processes.killAll(dir);
        LocalCluster.unmountQuietly(dir.resolve("mnt/node1"));
      }
      assertOneLine(r, "metrics address " + address + " cannot be bound");
      assertFalse(Files.readString(dir.resolve("log/node1.log")).contains("\tat "));
    }
  }

  // ---- helpers

  private static void assertOneLine(Distribution.Result r, String names) {
    assertNotEquals(0, r.exit(), r.toString());
    assertTrue(r.errLines().get(0).startsWith("etcfs: ") && r.errLines().get(0).contains(names),
        r.toString());
    assertTrue(r.errLines().stream().noneMatch(l -> l.startsWith("\tat ")), r.toString());
  }

  /** The scrape's text once the endpoint answers (polled: nodes bind it as they start). */
  private static String awaitScrape(int port) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    IOException last = null;
    while (System.nanoTime() < deadline) {
      try {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + port + "/metrics")).timeout(T).build(),
            HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        assertEquals(200, r.statusCode(), r.body());
        assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith(
            "text/plain; version=0.0.4"), r.headers().toString());
        return r.body();
      } catch (IOException e) {
        last = e;
        Thread.sleep(100);
      }
    }
    throw new AssertionError("no metrics on port " + port, last);
  }

  /** Waits until a node's recovery scan has seen {@code n} members (scans run every 2 s). */
  private static void awaitMembers(int port, int n) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    Double seen = null;
    while (System.nanoTime() < deadline) {
      seen = samples(awaitScrape(port)).get("etcfs_members");
      if (seen != null && seen == n) {
        return;
      }
      Thread.sleep(200);
    }
    throw new AssertionError("etcfs_members on port " + port + ": " + seen + ", not " + n);
  }

  private static void promtool(String text) throws Exception {
    Process p = new ProcessBuilder("promtool", "check", "metrics").redirectErrorStream(true)
        .start();
    try (var in = p.getOutputStream()) {
      in.write(text.getBytes(StandardCharsets.UTF_8));
    }
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "promtool hung");
    assertEquals(0, p.exitValue(), "promtool check metrics:\n" + out + "\non:\n" + text);
  }

  /** Each sample line's name with its labels, as written, and its value. */
  private static Map<String, Double> samples(String text) {
    Map<String, Double> out = new HashMap<>();
    for (String line : text.split("\n")) {
      Matcher m = SAMPLE.matcher(line);
      if (!line.startsWith("#") && m.matches()) {
        out.put(m.group(1) + (m.group(2) == null ? "" : m.group(2)),
            Double.parseDouble(m.group(3).replace("+Inf", "Infinity")));
      }
    }
    return out;
  }

  private static double grew(Map<String, Double> before, Map<String, Double> after, String key) {
    assertTrue(after.containsKey(key), key + " not exported");
    return after.get(key) - before.getOrDefault(key, 0.0);
  }

  private static Set<String> names(String query) {
    Set<String> out = new TreeSet<>();
    Matcher m = Pattern.compile("\\betcfs_[a-z0-9_]+").matcher(query);
    while (m.find()) {
      out.add(m.group());
    }
    return out;
  }

  private static String strategy(String kind, String fallback) {
    String chosen = System.getProperty("etcfs." + kind, "");
    return chosen.isEmpty() ? fallback : chosen;
  }

  /** The first of {@code n} consecutive free ports on the loopback address. */
  private static int freePorts(int n) throws IOException {
    for (int attempt = 0; attempt < 50; attempt++) {
      int first;
      try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
        first = s.getLocalPort();
      }
      boolean free = first + n - 1 <= 65535;
      for (int i = 1; i < n && free; i++) {
        try (ServerSocket s = new ServerSocket(first + i, 1, InetAddress.getLoopbackAddress())) {
          free = true;
        } catch (IOException e) {
          free = false;
        }
      }
      if (free) {
        return first;
      }
    }
    throw new IOException("no " + n + " consecutive free ports");
  }
}

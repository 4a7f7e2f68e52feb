package io.etcfs.launcher.experiment;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What {@code etcfs experiment} runs: one workload, under each strategy in order, on a cluster
 * of {@code nodes} nodes, {@code runs} times. Written as {@code key = value} lines; {@code #}
 * starts a comment; every key but {@code workload} and {@code strategies} has a default:
 *
 * <pre>
 * workload   = shared-writers                      # handoff, shared-writers, shared-creates,
 *                                                  #   node-kill or mixed
 * strategies = etcd/arena hazelcast/arena etcd/shared   # LOCK/ALLOCATOR, in the order run
 * nodes      = 3          # nodes in the cluster (1 to 32)
 * active     = 1 2 3      # how many of them drive the workload, one phase each (default 1..nodes)
 * runs       = 3          # whole repetitions, for min/median/max
 * phase      = 20s        # length of one phase (ms, s, m)
 * warmup     = 5s         # unmeasured, before the first phase of each run (0 for none)
 * sample     = 250ms      # throughput sampling interval
 * record     = 4K         # bytes of one write (K, M, G)
 * size       = 4G         # device image of a local cluster
 * </pre>
 *
 * @param source where it was read from, for messages
 * @param text the file as written, for the report
 */
public record Spec(String source, String text, String workload, List<Strategy> strategies,
    int nodes, List<Integer> active, int runs, Duration phase, Duration warmup, Duration sample,
    int record, long size) {

  /** The workloads, by the name a spec uses. */
  public static final List<String> WORKLOADS =
      List.of("handoff", "shared-writers", "shared-creates", "node-kill", "mixed");

  private static final List<String> KEYS = List.of("workload", "strategies", "nodes", "active",
      "runs", "phase", "warmup", "sample", "record", "size");

  /** Reads and checks a spec file. */
  public static Spec read(Path file) throws SpecException {
    String text;
    try {
      text = Files.readString(file, StandardCharsets.UTF_8);
    } catch (NoSuchFileException e) {
      throw new SpecException("spec " + file + ": no such file");
    } catch (IOException e) {
      throw new SpecException("spec " + file + ": cannot read it (" + e.getMessage() + ")");
    }
    return parse(text, file.toString());
  }

  /** Parses and checks the text of a spec; {@code source} names it in messages. */
  public static Spec parse(String text, String source) throws SpecException {
    Map<String, String> values = new LinkedHashMap<>();
    Map<String, Integer> lines = new LinkedHashMap<>();
    int n = 0;
    for (String raw : text.split("\n", -1)) {
      n++;
      int hash = raw.indexOf('#');
      String line = (hash >= 0 ? raw.substring(0, hash) : raw).strip();
      if (line.isEmpty()) {
        continue;
      }
      int eq = line.indexOf('=');
      String at = source + ":" + n + ": ";
      if (eq <= 0) {
        throw new SpecException(at + "'" + line + "' is not 'key = value'");
      }
      String key = line.substring(0, eq).strip().toLowerCase(Locale.ROOT);
      String value = line.substring(eq + 1).strip();
      if (!KEYS.contains(key)) {
        throw new SpecException(at + "unknown key '" + key + "' (keys: "
            + String.join(", ", KEYS) + ")");
      }
      if (values.containsKey(key)) {
        throw new SpecException(at + key + " is set twice (first on line " + lines.get(key)
            + ")");
      }
      if (value.isEmpty()) {
        throw new SpecException(at + key + " has no value");
      }
      values.put(key, value);
      lines.put(key, n);
    }
    Reader r = new Reader(source, values, lines);
    String workload = r.required("workload");
    if (!WORKLOADS.contains(workload)) {
      throw r.bad("workload", "unknown workload '" + workload + "' ("
          + String.join(", ", WORKLOADS) + ")");
    }
    List<Strategy> strategies = new ArrayList<>();
    for (String s : r.required("strategies").split("\\s+")) {
      Strategy st = Strategy.parse(s);
      if (st == null) {
        throw r.bad("strategies", "'" + s + "' is not LOCK/ALLOCATOR (for example etcd/arena)");
      }
      if (strategies.contains(st)) {
        throw r.bad("strategies", s + " is listed twice");
      }
      strategies.add(st);
    }
    int nodes = r.integer("nodes", 3, 1, 32);
    int least = workload.equals("node-kill") ? 2 : 1;
    if (nodes < least) {
      throw r.bad("nodes", "node-kill needs 2 nodes at least (one killed, one taking over)");
    }
    List<Integer> active = new ArrayList<>();
    if (values.containsKey("active")) {
      for (String a : values.get("active").split("\\s+")) {
        int k = r.parseInt("active", a);
        if (k < least || k > nodes) {
          throw r.bad("active", "active " + a + " is not between " + least + " and nodes ("
              + nodes + ")");
        }
        if (active.contains(k)) {
          throw r.bad("active", a + " is listed twice");
        }
        active.add(k);
      }
    } else {
      for (int k = least; k <= nodes; k++) {
        active.add(k);
      }
    }
    int runs = r.integer("runs", 3, 1, 1000);
    Duration phase = r.duration("phase", Duration.ofSeconds(20));
    Duration warmup = values.getOrDefault("warmup", "").matches("0+(ms|s|m)?") ? Duration.ZERO
        : r.duration("warmup", Duration.ofSeconds(5));
    Duration sample = r.duration("sample", Duration.ofMillis(250));
    if (sample.toMillis() < 10 || sample.compareTo(phase) > 0) {
      throw r.bad("sample", "sample must be 10ms at least and no longer than phase");
    }
    long record = r.size("record", 4096);
    if (record > 64L << 20) {
      throw r.bad("record", "record must be 64M at most");
    }
    long size = r.size("size", 4L << 30);
    if (size < 256L << 20) {
      throw r.bad("size", "size must be 256M at least");
    }
    return new Spec(source, text, workload, List.copyOf(strategies), nodes, List.copyOf(active),
        runs, phase, warmup, sample, (int) record, size);
  }

  /** This spec with {@code runs} replaced (the command line's {@code --runs}). */
  public Spec withRuns(int runs) {
    return new Spec(source, text, workload, strategies, nodes, active, runs, phase, warmup,
        sample, record, size);
  }

  /** The reading of one spec's values, with messages that name the line. */
  private record Reader(String source, Map<String, String> values, Map<String, Integer> lines) {
    SpecException bad(String key, String message) {
      Integer line = lines.get(key);
      return new SpecException(source + (line == null ? "" : ":" + line) + ": " + message);
    }

    String required(String key) throws SpecException {
      String v = values.get(key);
      if (v == null) {
        throw new SpecException(source + ": no " + key + " (every spec names its " + key + ")");
      }
      return v;
    }

    int parseInt(String key, String v) throws SpecException {
      try {
        return Integer.parseInt(v);
      } catch (NumberFormatException e) {
        throw bad(key, key + " '" + v + "' is not a whole number");
      }
    }

    int integer(String key, int dflt, int min, int max) throws SpecException {
      String v = values.get(key);
      if (v == null) {
        return dflt;
      }
      int i = parseInt(key, v);
      if (i < min || i > max) {
        throw bad(key, key + " must be between " + min + " and " + max + " (got " + v + ")");
      }
      return i;
    }

    Duration duration(String key, Duration dflt) throws SpecException {
      String v = values.get(key);
      if (v == null) {
        return dflt;
      }
      String t = v.toLowerCase(Locale.ROOT);
      try {
        Duration d;
        if (t.endsWith("ms")) {
          d = Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2)));
        } else if (t.endsWith("s")) {
          d = Duration.ofSeconds(Long.parseLong(t.substring(0, t.length() - 1)));
        } else if (t.endsWith("m")) {
          d = Duration.ofMinutes(Long.parseLong(t.substring(0, t.length() - 1)));
        } else {
          d = Duration.ofSeconds(Long.parseLong(t));
        }
        if (d.isNegative() || d.isZero()) {
          throw new NumberFormatException();
        }
        return d;
      } catch (NumberFormatException e) {
        throw bad(key, key + " '" + v + "' is not a duration (examples: 20s, 500ms, 2m)");
      }
    }

    long size(String key, long dflt) throws SpecException {
      String v = values.get(key);
      if (v == null) {
        return dflt;
      }
      String t = v.toUpperCase(Locale.ROOT).replaceAll("I?B$", "");
      long mult = 1;
      int shift = t.isEmpty() ? -1 : "KMGT".indexOf(t.charAt(t.length() - 1));
      if (shift >= 0) {
        mult = 1L << (10 * (shift + 1));
        t = t.substring(0, t.length() - 1);
      }
      try {
        long b = Math.multiplyExact(Long.parseLong(t), mult);
        if (b <= 0) {
          throw new NumberFormatException();
        }
        return b;
      } catch (NumberFormatException | ArithmeticException e) {
        throw bad(key, key + " '" + v + "' is not a size (examples: 4K, 2G, 1048576)");
      }
    }
  }
}

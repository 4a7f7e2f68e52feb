package io.etcfs.support.switches;

import io.etcfs.spi.fs.FsRecord;
import io.etcfs.spi.fs.Keyspace;
import io.etcfs.spi.meta.Compare;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.Txn;
import java.io.IOException;
import java.io.StringReader;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;

/**
 * The asking side of a live switch of lock backend or allocator (issue #15), and the keys and
 * records it shares with the nodes that carry it out (the core's {@code Switches}): a node's
 * {@code lock switch} and the CLI's {@code etcfs switch} both ask through here. What each key
 * holds is in docs/ARCHITECTURE.md, "The etcd keyspace".
 */
public final class SwitchRequests {
  /** The kinds of strategy that switch. */
  public static final String LOCK = "lock";
  public static final String ALLOC = "alloc";

  /** How long the cluster has to stop and drain before the switch rolls back. */
  public static final Duration DEADLINE = Duration.ofSeconds(30);

  /** A switch request, as stored in {@code switch/request}. */
  public record Request(long epoch, String kind, String from, String to, String lock,
      String alloc, String by, long requested, long deadline, long record) {
    public byte[] encode() {
      Properties p = new Properties();
      p.setProperty("epoch", Long.toString(epoch));
      p.setProperty("kind", kind);
      p.setProperty("from", from);
      p.setProperty("to", to);
      p.setProperty("lock", lock);
      p.setProperty("alloc", alloc);
      p.setProperty("requestedBy", by);
      p.setProperty("requested", Long.toString(requested));
      p.setProperty("deadline", Long.toString(deadline));
      p.setProperty("record", Long.toString(record));
      return store(p);
    }

    public static Request decode(byte[] value) {
      Properties p = load(value);
      return new Request(Long.parseLong(p.getProperty("epoch")), p.getProperty("kind"),
          p.getProperty("from"), p.getProperty("to"), p.getProperty("lock"),
          p.getProperty("alloc"), p.getProperty("requestedBy"),
          Long.parseLong(p.getProperty("requested")), Long.parseLong(p.getProperty("deadline")),
          Long.parseLong(p.getProperty("record")));
    }

    public String describe() {
      return "switch " + epoch + " of the " + what(kind) + " from " + from + " to " + to
          + ", requested by " + by;
    }

    /** The history record of this switch, with {@code result}. */
    public Properties history(String result) {
      Properties h = new Properties();
      h.setProperty("epoch", Long.toString(epoch));
      h.setProperty("kind", kind);
      h.setProperty("from", from);
      h.setProperty("to", to);
      h.setProperty("requestedBy", by);
      h.setProperty("requested", Long.toString(requested));
      h.setProperty("result", result);
      return h;
    }
  }

  private final MetaStore store;
  private final Keyspace space;

  public SwitchRequests(MetaStore store, Keyspace space) {
    this.store = store;
    this.space = space;
  }

  /** "lock backend" or "allocator". */
  public static String what(String kind) {
    return kind.equals(LOCK) ? "lock backend" : "allocator";
  }

  /**
   * Asks the cluster to switch {@code kind} to {@code to} and waits for the outcome.
   *
   * @param available the backends of that kind the asker knows to be installed
   * @return what was done and the pause, in a few lines
   * @throws IllegalArgumentException bad input, refused before anything stops
   * @throws IllegalStateException the switch could not be made (another running, rolled back)
   */
  public String request(String kind, String to, List<String> available, String by,
      Duration wait) throws InterruptedException {
    Optional<KeyValue> recordKv = store.get(space.record());
    FsRecord record = FsRecord.decode(recordKv.orElseThrow(() -> new IllegalStateException(
        "no filesystem '" + space.name() + "' in etcd")).value());
    String from = kind.equals(LOCK) ? record.lockBackend() : record.allocBackend();
    if (!available.contains(to)) {
      throw new IllegalArgumentException("no " + what(kind) + " '" + to + "' here (installed: "
          + String.join(", ", available) + ")");
    }
    if (to.equals(from)) {
      return "the cluster uses " + what(kind) + " " + to + " already; nothing to do";
    }
    Optional<KeyValue> running = store.get(requestKey());
    if (running.isPresent()) {
      throw new IllegalStateException("another switch is running: "
          + Request.decode(running.get().value()).describe());
    }
    long now = System.currentTimeMillis();
    Request r = new Request(lastEpoch() + 1, kind, from, to,
        kind.equals(LOCK) ? to : record.lockBackend(),
        kind.equals(ALLOC) ? to : record.allocBackend(), by, now, now + DEADLINE.toMillis(),
        recordKv.get().modRevision());
    boolean put = store.commit(new Txn()
        .when(Compare.absent(requestKey()))
        .when(Compare.modRevision(space.record(), recordKv.get().modRevision()))
        .then(Op.put(requestKey(), r.encode()))).succeeded();
    if (!put) {
      running = store.get(requestKey());
      throw new IllegalStateException("another switch is running"
          + running.map(kv -> ": " + Request.decode(kv.value()).describe()).orElse(
              " or has just ended"));
    }
    return awaitOutcome(r, wait);
  }

  private String awaitOutcome(Request r, Duration wait) throws InterruptedException {
    long deadline = System.nanoTime() + wait.toNanos();
    Optional<KeyValue> h = Optional.empty();
    while (System.nanoTime() < deadline
        && (h = store.get(historyKey(r.epoch()))).isEmpty()) {
      Thread.sleep(50);
    }
    if (h.isEmpty()) {
      throw new IllegalStateException(r.describe() + ": no outcome after " + wait.toSeconds()
          + " s; see 'switches'");
    }
    Properties p = load(h.get().value());
    String result = p.getProperty("result");
    if (!result.equals("done")) {
      throw new IllegalStateException(r.describe() + ": " + result);
    }
    List<String> nodes = List.of(p.getProperty("nodes").split(","));
    long firstStop = Long.parseLong(p.getProperty("firstStop"));
    Map<String, Long> resumed = new TreeMap<>();
    Map<String, String> failed = new TreeMap<>();
    List<String> gone = new ArrayList<>();
    while (System.nanoTime() < deadline) {
      // only the members the cutover counted: a node that missed the switch (fenced, say)
      // records when it followed too
      resumed = resumedAt(r.epoch());
      resumed.keySet().retainAll(nodes);
      failed = perNode(r.epoch(), "failed");
      failed.keySet().retainAll(nodes);
      // a node that died after it answered is fenced and recovered as usual: not waited for
      gone = new ArrayList<>();
      for (String n : nodes) {
        if (!resumed.containsKey(n) && !failed.containsKey(n)
            && store.get(space.bytes(Keyspace.MEMBERS + n)).isEmpty()) {
          gone.add(n);
        }
      }
      if (resumed.size() + failed.size() + gone.size() >= nodes.size()) {
        break;
      }
      Thread.sleep(50);
    }
    long lastResume = 0;
    for (long t : resumed.values()) {
      lastResume = Math.max(lastResume, t);
    }
    long pause = lastResume - firstStop;
    p.setProperty("pauseMillis", Long.toString(pause));
    store.commit(new Txn().then(Op.put(historyKey(r.epoch()), store(p))));
    List<String> late = new ArrayList<>(nodes);
    late.removeAll(resumed.keySet());
    late.removeAll(gone);
    late.removeAll(failed.keySet());
    if (!failed.isEmpty()) {
      List<String> why = new ArrayList<>();
      failed.forEach((node, reason) -> why.add(node + ": " + reason));
      throw new IllegalStateException(r.describe() + ": cut over, but " + String.join("; ", why)
          + " — those nodes hold their processes at the gate until they can (see their logs)");
    }
    return "switched the " + what(r.kind()) + " from " + r.from() + " to " + r.to() + " (switch "
        + r.epoch() + ", " + nodes.size() + " node" + (nodes.size() == 1 ? "" : "s") + ": "
        + String.join(", ", nodes) + ")\n"
        + "pause: " + pause + " ms, from the first node stopping to the last resuming"
        + (late.isEmpty() ? "" : " (not resumed yet: " + String.join(", ", late) + ")")
        + (gone.isEmpty() ? "" : " (left the cluster since: " + String.join(", ", gone) + ")")
        + "\n"
        + "undo: " + r.kind() + " switch " + r.from();
  }

  /** The history, oldest first: one line per switch. */
  public List<String> history() {
    List<String> lines = new ArrayList<>();
    for (KeyValue kv : store.range(space.bytes(Keyspace.SWITCHES),
        Keys.prefixEnd(space.bytes(Keyspace.SWITCHES)), 0).kvs()) {
      String rel = space.relative(kv.keyString()).substring(Keyspace.SWITCHES.length());
      if (rel.contains("/")) {
        continue;
      }
      Properties p = load(kv.value());
      String pause = p.getProperty("pauseMillis");
      lines.add(Long.parseLong(p.getProperty("epoch")) + " " + p.getProperty("kind") + " "
          + p.getProperty("from") + " -> " + p.getProperty("to") + " "
          + java.time.Instant.ofEpochMilli(Long.parseLong(p.getProperty("requested")))
          + " by " + p.getProperty("requestedBy") + ": " + p.getProperty("result")
          + (pause == null ? "" : ", pause " + pause + " ms"));
    }
    return lines;
  }

  private Map<String, Long> resumedAt(long epoch) {
    Map<String, Long> at = new TreeMap<>();
    perNode(epoch, "resumed").forEach((node, v) -> at.put(node, Long.parseLong(v)));
    return at;
  }

  /** The per-node keys {@code switches/<epoch>/<what>/<node>}: node → value. */
  private Map<String, String> perNode(long epoch, String what) {
    Map<String, String> found = new TreeMap<>();
    byte[] prefix = space.bytes(Keyspace.SWITCHES + Keyspace.hex(epoch) + "/" + what + "/");
    for (KeyValue kv : store.range(prefix, Keys.prefixEnd(prefix), 0).kvs()) {
      found.put(kv.keyString().substring(kv.keyString().lastIndexOf('/') + 1),
          kv.valueString());
    }
    return found;
  }

  /** The epoch of the latest switch asked for, or 0. */
  public long lastEpoch() {
    long last = 0;
    for (KeyValue kv : store.range(space.bytes(Keyspace.SWITCHES),
        Keys.prefixEnd(space.bytes(Keyspace.SWITCHES)), 0).kvs()) {
      String rel = space.relative(kv.keyString()).substring(Keyspace.SWITCHES.length());
      int slash = rel.indexOf('/');
      last = Math.max(last, Long.parseUnsignedLong(slash < 0 ? rel : rel.substring(0, slash),
          16));
    }
    return last;
  }

  public byte[] requestKey() {
    return space.bytes(Keyspace.SWITCH + "request");
  }

  /** Where the members' answers lie: a prefix. */
  public byte[] ackPrefix() {
    return space.bytes(Keyspace.SWITCH + "ack/");
  }

  public byte[] ackKey(String node) {
    return space.bytes(Keyspace.SWITCH + "ack/" + node);
  }

  public byte[] historyKey(long epoch) {
    return space.bytes(Keyspace.SWITCHES + Keyspace.hex(epoch));
  }

  public byte[] resumedKey(long epoch, String node) {
    return space.bytes(Keyspace.SWITCHES + Keyspace.hex(epoch) + "/resumed/" + node);
  }

  /** Why {@code node} could not follow switch {@code epoch} after its cutover. */
  public byte[] failedKey(long epoch, String node) {
    return space.bytes(Keyspace.SWITCHES + Keyspace.hex(epoch) + "/failed/" + node);
  }

  /** Properties as stored text. */
  public static byte[] store(Properties p) {
    StringWriter w = new StringWriter();
    try {
      p.store(w, null);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return w.toString().getBytes(StandardCharsets.UTF_8);
  }

  /** Stored text as Properties. */
  public static Properties load(byte[] value) {
    Properties p = new Properties();
    try {
      p.load(new StringReader(new String(value, StandardCharsets.UTF_8)));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return p;
  }
}

package io.etcfs.fencing.internal;

import io.etcfs.spi.fencing.DeadNode;
import io.etcfs.spi.fencing.Membership;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The record of one recovery, {@code fences/<node>/<generation>}: who was fenced, by whom, when,
 * and what each step found. {@code key=value} lines, readable with {@code etcdctl get}.
 */
final class FenceRecord {
  private final Map<String, String> fields = new LinkedHashMap<>();
  private final long startNanos = System.nanoTime();

  FenceRecord(DeadNode dead, int slot, Membership by, Instant started, String agent) {
    fields.put("node", dead.node());
    fields.put("generation", Long.toString(dead.generation()));
    fields.put("slot", Integer.toString(slot));
    fields.put("recoveredBy", by.nodeName());
    fields.put("recoveredByGeneration", Long.toString(by.generation()));
    fields.put("started", started.toString());
    fields.put("agent", agent);
  }

  void agent(String result) {
    fields.put("agentResult", result);
  }

  void heartbeat(String result) {
    fields.put("heartbeat", result);
  }

  void grace(String grace) {
    fields.put("grace", grace);
  }

  void participant(String name, String result) {
    fields.put("participant." + name, result);
  }

  String seconds() {
    return Recovery.seconds(System.nanoTime() - startNanos);
  }

  String summary() {
    return fields.entrySet().stream()
        .filter(e -> e.getKey().startsWith("agentResult") || e.getKey().startsWith("heartbeat")
            || e.getKey().startsWith("participant."))
        .map(e -> e.getKey() + ": " + e.getValue()).collect(Collectors.joining("; "));
  }

  byte[] done() {
    fields.put("result", "done");
    fields.put("finished", Instant.now().toString());
    fields.put("seconds", seconds());
    return text();
  }

  byte[] failed(String reason, int attempt) {
    fields.put("result", "failed: " + reason);
    fields.put("attempts", Integer.toString(attempt));
    fields.put("finished", Instant.now().toString());
    return text();
  }

  private byte[] text() {
    // One value per line; newlines in a value (a command's message) would break the format.
    return MemberRecord.bytes(fields.entrySet().stream()
        .map(e -> e.getKey() + "=" + e.getValue().replace('\n', ' '))
        .collect(Collectors.joining("\n", "", "\n")));
  }
}

package io.etcfs.launcher.experiment;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Locale;

/**
 * {@code raw.json}: every sample, segment, latency and switch of an experiment, so that any
 * figure of the report can be computed again (or differently) from it. Written by hand: the
 * structure is small and fixed, and the CLI carries no JSON library of its own.
 */
public final class RawJson {
  private final StringBuilder out = new StringBuilder();

  private RawJson() {}

  public static void write(Results r, Path file) throws IOException {
    Files.writeString(file, of(r), StandardCharsets.UTF_8);
  }

  public static String of(Results r) {
    RawJson j = new RawJson();
    j.results(r);
    return j.out.toString();
  }

  private void results(Results r) {
    Spec s = r.spec;
    out.append("{\n  \"spec\": {");
    field("source", s.source()).append(", ");
    field("text", s.text()).append(", ");
    field("workload", s.workload()).append(", ");
    out.append("\"strategies\": [");
    for (int i = 0; i < s.strategies().size(); i++) {
      out.append(i > 0 ? ", " : "");
      str(s.strategies().get(i).toString());
    }
    out.append("], ");
    field("nodes", s.nodes()).append(", ");
    out.append("\"active\": ").append(s.active()).append(", ");
    field("runs", s.runs()).append(", ");
    field("phaseMillis", s.phase().toMillis()).append(", ");
    field("warmupMillis", s.warmup().toMillis()).append(", ");
    field("sampleMillis", s.sample().toMillis()).append(", ");
    field("record", s.record()).append(", ");
    field("size", s.size()).append("},\n  \"machine\": {");
    Machine m = r.machine;
    field("host", m.host()).append(", ");
    field("kernel", m.kernel()).append(", ");
    field("cores", m.cores()).append(", ");
    out.append("\"memoryGiB\": ").append(String.format(Locale.ROOT, "%.1f", m.memoryGiB()))
        .append(", ");
    field("java", m.jvm()).append("},\n  ");
    field("cluster", r.cluster).append(",\n  ");
    field("startedAt", Instant.ofEpochMilli(r.startedAt).toString()).append(",\n  ");
    field("endedAt", Instant.ofEpochMilli(r.endedAt).toString()).append(",\n  \"runs\": [");
    for (int i = 0; i < r.runs.size(); i++) {
      out.append(i > 0 ? "," : "").append("\n    ");
      run(r.runs.get(i), s.strategies());
    }
    out.append("\n  ]\n}\n");
  }

  private void run(Results.Run run, List<Strategy> strategies) {
    out.append("{");
    field("index", run.index).append(", ");
    field("startedAt", run.startedAt).append(",\n     \"notes\": [");
    for (int i = 0; i < run.notes.size(); i++) {
      out.append(i > 0 ? ", " : "");
      str(run.notes.get(i));
    }
    out.append("],\n     \"segments\": [");
    for (int i = 0; i < run.segments.size(); i++) {
      Results.Segment g = run.segments.get(i);
      out.append(i > 0 ? "," : "").append("\n      {");
      field("seq", g.seq()).append(", ");
      field("kind", g.kind()).append(", ");
      field("strategy", strategies.get(g.strategy()).toString()).append(", ");
      field("active", g.active()).append(", ");
      field("start", g.start()).append(", ");
      field("end", g.end()).append(", ");
      longs("ops", g.ops()).append(", ");
      field("errors", g.errors()).append(", ");
      out.append("\"loadAverage\": ").append(String.format(Locale.ROOT, "%.2f",
          g.loadAverage())).append(", ");
      out.append("\"opsPerSecond\": ").append(String.format(Locale.ROOT, "%.2f", g.rate()))
          .append("}");
    }
    out.append("],\n     \"switches\": [");
    for (int i = 0; i < run.switches.size(); i++) {
      Results.Switch w = run.switches.get(i);
      out.append(i > 0 ? "," : "").append("\n      {");
      field("from", strategies.get(w.from()).toString()).append(", ");
      field("to", strategies.get(w.to()).toString()).append(", ");
      field("kind", w.kind()).append(", ");
      field("fromName", w.fromName()).append(", ");
      field("toName", w.toName()).append(", ");
      field("requested", w.requested()).append(", ");
      field("returned", w.returned()).append(", ");
      field("outcome", w.outcome()).append(", ");
      field("live", w.live()).append(", ");
      field("epoch", w.epoch()).append(", ");
      field("firstStop", w.firstStop()).append(", ");
      field("cutover", w.cutover()).append(", ");
      field("pauseMillis", w.pauseMillis()).append(", ");
      field("nodes", w.nodes()).append("}");
    }
    out.append("],\n     \"latencies\": [");
    for (int i = 0; i < run.latencies.size(); i++) {
      Results.Latency l = run.latencies.get(i);
      out.append(i > 0 ? ", " : "").append("{");
      field("segment", l.segment()).append(", ");
      field("what", l.what()).append(", ");
      out.append("\"millis\": ").append(String.format(Locale.ROOT, "%.3f", l.millis()))
          .append(", ");
      field("at", l.at()).append("}");
    }
    out.append("],\n     \"samples\": [");
    for (int i = 0; i < run.samples.size(); i++) {
      Results.Sample p = run.samples.get(i);
      out.append(i > 0 ? "," : "").append("\n      {");
      field("at", p.at()).append(", ");
      field("millis", p.millis()).append(", ");
      field("segment", p.segment()).append(", ");
      longs("ops", p.ops()).append(", ");
      field("errors", p.errors()).append("}");
    }
    out.append("]}");
  }

  private StringBuilder field(String name, String value) {
    str(name);
    out.append(": ");
    str(value);
    return out;
  }

  private StringBuilder field(String name, long value) {
    str(name);
    return out.append(": ").append(value);
  }

  private StringBuilder field(String name, boolean value) {
    str(name);
    return out.append(": ").append(value);
  }

  private StringBuilder longs(String name, long[] values) {
    str(name);
    out.append(": [");
    for (int i = 0; i < values.length; i++) {
      out.append(i > 0 ? ", " : "").append(values[i]);
    }
    return out.append("]");
  }

  private void str(String s) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (c < 0x20) {
            out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    out.append('"');
  }
}

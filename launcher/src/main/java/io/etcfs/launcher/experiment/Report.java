package io.etcfs.launcher.experiment;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** {@code report.md}: what ran, where, and the figures over the runs, with the plots. */
public final class Report {
  private static final DateTimeFormatter DAY =
      DateTimeFormatter.ofPattern("yyyy-MM-dd, HH:mm").withZone(ZoneOffset.UTC);
  private static final DateTimeFormatter TIME =
      DateTimeFormatter.ofPattern("HH:mm").withZone(ZoneOffset.UTC);

  private Report() {}

  public static void write(Results r, String command, List<String> plots, Path file)
      throws IOException {
    Files.writeString(file, of(r, command, plots), StandardCharsets.UTF_8);
  }

  /**
   * The report's text.
   *
   * @param command the command line that ran it
   * @param plots the PNG files beside it, by name
   */
  public static String of(Results r, String command, List<String> plots) {
    Spec s = r.spec;
    StringBuilder b = new StringBuilder();
    b.append("# etcfs experiment: ").append(s.workload()).append("\n\n");
    b.append("Run of ").append(DAY.format(Instant.ofEpochMilli(r.startedAt))).append("–")
        .append(TIME.format(Instant.ofEpochMilli(r.endedAt))).append(" UTC on ")
        .append(r.machine.describe()).append(".\n");
    b.append("Cluster: ").append(r.cluster).append(".\n\n");
    b.append("    ").append(command).append("\n\n");
    b.append("## Spec\n\n```\n").append(s.text().strip()).append("\n```\n\n");
    b.append("## What was measured\n\n");
    b.append(Workloads.describe(s.workload(), s.record()));
    if (!s.warmup().isZero()) {
      b.append(" Each run starts with ").append(seconds(s.warmup())).append(" of the"
          + " workload on ").append(s.strategies().get(0)).append(", not measured (the nodes'"
          + " JIT and sessions warm up).");
    }
    b.append(" Each strategy then runs one phase of ").append(seconds(s.phase()))
        .append(" per number of nodes driving the workload (").append(join(s.active()))
        .append("), in that order; the cluster then switches live to the next strategy while"
        + " every node still drives it. Operations/s is what all driving nodes completed in the"
        + " phase, divided by its length. Each cell is the median over ")
        .append(r.runs.size()).append(" run").append(r.runs.size() == 1 ? "" : "s")
        .append(" with the minimum and maximum in brackets; ÷ is the ratio of medians to ")
        .append(s.strategies().get(0)).append(". The strategies run in the order listed, each"
            + " on the cluster the previous one left (its files, its caches).\n\n");
    table(b, r);
    load(b, r);
    switches(b, r);
    List<String> notes = r.runs.stream().flatMap(run -> run.notes.stream()
        .map(n -> "run " + run.index + ": " + n)).toList();
    if (!notes.isEmpty()) {
      b.append("## Notes\n\n");
      notes.forEach(n -> b.append("* ").append(n.replaceAll("\\s*\n\\s*", " ")).append("\n"));
      b.append("\n");
    }
    if (!plots.isEmpty()) {
      b.append("## Plots\n\n");
      for (String p : plots) {
        b.append("![").append(p.replace(".png", "")).append("](").append(p).append(")\n\n");
      }
    }
    b.append("Every sample, phase, latency and switch is in `raw.json`.\n");
    return b.toString();
  }

  private static void table(StringBuilder b, Results r) {
    List<Strategy> st = r.spec.strategies();
    b.append("| figure |");
    StringBuilder rule = new StringBuilder("|---|");
    for (int i = 0; i < st.size(); i++) {
      b.append(" ").append(st.get(i)).append(" |");
      rule.append("---:|");
      if (i > 0) {
        b.append(" ÷ |");
        rule.append("---:|");
      }
    }
    b.append("\n").append(rule).append("\n");
    for (Figures.Row row : Figures.rows(r)) {
      b.append("| ").append(row.figure()).append(" |");
      Stats first = row.stats(0);
      for (int i = 0; i < st.size(); i++) {
        Stats v = row.stats(i);
        b.append(" ").append(v == null ? "–" : cell(v)).append(" |");
        if (i > 0) {
          b.append(" ").append(ratio(v, first)).append(" |");
        }
      }
      b.append("\n");
    }
    b.append("\n");
  }

  /** How busy the machine was: the load average at the end of each phase, per run. */
  private static void load(StringBuilder b, Results r) {
    StringBuilder runs = new StringBuilder();
    for (Results.Run run : r.runs) {
      List<Double> l = run.segments.stream()
          .filter(g -> g.kind().equals(Results.Segment.PHASE) && g.loadAverage() >= 0)
          .map(Results.Segment::loadAverage).toList();
      if (!l.isEmpty()) {
        Stats s = Stats.of(l);
        runs.append(runs.length() == 0 ? "" : "; ").append("run ").append(run.index).append(" ")
            .append(String.format(Locale.ROOT, "%.1f–%.1f", s.min(), s.max()));
      }
    }
    if (runs.length() > 0) {
      b.append("The machine's 1-minute load average at the end of the phases (").append(
          r.machine.cores()).append(" cores; the cluster and this runner included): ")
          .append(runs).append(".\n\n");
    }
  }

  private static void switches(StringBuilder b, Results r) {
    b.append("## Switches\n\n");
    boolean any = r.runs.stream().anyMatch(run -> !run.switches.isEmpty());
    if (!any) {
      b.append("None (one strategy).\n\n");
      return;
    }
    b.append("The pause runs from the first node stopping to the last resuming, as the nodes"
        + " recorded it in etcd; \"asked → answered\" is what the runner waited.\n\n");
    b.append("| run | what | from → to | outcome | pause, ms | asked → answered, ms |\n");
    b.append("|---:|---|---|---|---:|---:|\n");
    for (Results.Run run : r.runs) {
      for (Results.Switch w : run.switches) {
        b.append("| ").append(run.index).append(" | ").append(w.kind()).append(" | ")
            .append(w.fromName()).append(" → ").append(w.toName()).append(" | ")
            .append(w.live() ? "live, switch " + w.epoch() : w.outcome()).append(" | ")
            .append(w.pauseMillis() >= 0 ? Long.toString(w.pauseMillis()) : "–").append(" | ")
            .append(w.returned() - w.requested()).append(" |\n");
      }
    }
    b.append("\n");
    Map<String, List<Double>> pauses = Figures.pauses(r);
    if (!pauses.isEmpty()) {
      b.append("| live switch | count | pause, ms: min | median | max |\n");
      b.append("|---|---:|---:|---:|---:|\n");
      pauses.forEach((k, v) -> {
        Stats s = Stats.of(v);
        b.append("| ").append(k).append(" | ").append(s.count()).append(" | ")
            .append(num(s.min())).append(" | ").append(num(s.median())).append(" | ")
            .append(num(s.max())).append(" |\n");
      });
      b.append("\n");
    }
  }

  static String cell(Stats s) {
    boolean whole = s.min() == Math.rint(s.min()) && s.median() == Math.rint(s.median())
        && s.max() == Math.rint(s.max());
    double scale = Math.abs(s.median());
    if (s.count() == 1 || s.min() == s.max()) {
      return num(s.median(), scale, whole);
    }
    return num(s.median(), scale, whole) + " (" + num(s.min(), scale, whole) + "–"
        + num(s.max(), scale, whole) + ")";
  }

  static String ratio(Stats v, Stats first) {
    if (v == null || first == null || first.median() == 0) {
      return "–";
    }
    return String.format(Locale.ROOT, "%.2f", v.median() / first.median());
  }

  /** Whole numbers from 100 up (and where every value is whole), else three figures. */
  static String num(double v) {
    return num(v, Math.abs(v), v == Math.rint(v));
  }

  /** {@code v} with the decimals a value of size {@code scale} gets. */
  private static String num(double v, double scale, boolean whole) {
    if (whole || scale >= 100) {
      return String.format(Locale.ROOT, "%.0f", v);
    }
    return String.format(Locale.ROOT, scale >= 10 ? "%.1f" : "%.2f", v);
  }

  /** A duration in seconds: "15 s", "0.4 s". */
  static String seconds(java.time.Duration d) {
    long ms = d.toMillis();
    return ms % 1000 == 0 ? ms / 1000 + " s" : String.format(Locale.ROOT, "%.1f s", ms / 1000.0);
  }

  private static String join(List<Integer> l) {
    return String.join(", ", l.stream().map(String::valueOf).toList());
  }
}

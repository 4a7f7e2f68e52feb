package io.etcfs.launcher.experiment;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.IntervalMarker;
import org.jfree.chart.plot.ValueMarker;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYErrorRenderer;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.ui.RectangleAnchor;
import org.jfree.chart.ui.RectangleInsets;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;
import org.jfree.data.xy.YIntervalSeries;
import org.jfree.data.xy.YIntervalSeriesCollection;

/**
 * The experiment's plots, drawn with JFreeChart into PNG files without a display (the runner
 * sets {@code java.awt.headless}): throughput over one run's time axis with every switch
 * marked, and each strategy's throughput against the number of nodes driving the workload.
 */
public final class Charts {
  public static final int WIDTH = 1200;
  public static final int HEIGHT = 600;

  private static final Color[] COLOURS = {new Color(0x1f77b4), new Color(0xd62728),
      new Color(0x2ca02c), new Color(0x9467bd), new Color(0xff7f0e), new Color(0x8c564b)};
  private static final Color SWITCHING = new Color(0x7f7f7f);

  private Charts() {}

  /**
   * Operations/s of all nodes, sample by sample, over run {@code run}: a line per strategy, the
   * samples taken while switching in grey, each live switch's pause shaded and labelled.
   */
  public static void throughput(Results r, Results.Run run, Path file) throws IOException {
    headless();
    List<Strategy> st = r.spec.strategies();
    XYSeriesCollection data = throughputData(r, run);
    NumberAxis time = new NumberAxis("seconds since the run started");
    NumberAxis rate = new NumberAxis("operations/s, all nodes");
    rate.setAutoRangeIncludesZero(true);
    XYLineAndShapeRenderer lines = new XYLineAndShapeRenderer(true, false);
    for (int i = 0; i < st.size(); i++) {
      lines.setSeriesPaint(i, COLOURS[i % COLOURS.length]);
      lines.setSeriesStroke(i, new BasicStroke(1.5f));
    }
    lines.setSeriesPaint(st.size(), SWITCHING);
    lines.setSeriesStroke(st.size(), new BasicStroke(1.5f));
    lines.setSeriesPaint(st.size() + 1, new Color(0xc7c7c7));
    lines.setSeriesStroke(st.size() + 1, new BasicStroke(1f));
    XYPlot plot = new XYPlot(data, time, rate, lines);
    plot.setBackgroundPaint(Color.WHITE);
    plot.setDomainGridlinePaint(new Color(0xdddddd));
    plot.setRangeGridlinePaint(new Color(0xdddddd));
    Font small = new Font(Font.SANS_SERIF, Font.PLAIN, 11);
    for (Results.Segment g : run.segments) {
      if (g.kind().equals(Results.Segment.PHASE)) {
        ValueMarker m = new ValueMarker(g.start() / 1000.0, new Color(0xbbbbbb),
            new BasicStroke(1f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 1f,
                new float[] {3f, 3f}, 0f));
        m.setLabel(g.active() + " node" + (g.active() == 1 ? "" : "s"));
        m.setLabelFont(small);
        m.setLabelAnchor(RectangleAnchor.BOTTOM_RIGHT);
        m.setLabelTextAnchor(TextAnchor.BOTTOM_LEFT);
        plot.addDomainMarker(m);
      }
    }
    int marked = 0;
    for (Results.Switch w : run.switches) {
      if (!w.live() && !w.kind().equals(Results.Segment.FRESH)) {
        continue; // refused at once: the fresh cluster that follows is drawn instead
      }
      // the whole wait, asked to answered (a target backend starting: before anything stops)
      IntervalMarker asked = new IntervalMarker(w.requested() / 1000.0, w.returned() / 1000.0,
          new Color(0, 0, 0, 18));
      plot.addDomainMarker(asked);
      double from;
      double to;
      String label;
      if (w.live() && w.firstStop() > 0) {
        from = (w.firstStop() - run.startedAt) / 1000.0;
        to = from + Math.max(0, w.pauseMillis()) / 1000.0;
        label = w.kind() + " switch: " + w.pauseMillis() + " ms";
      } else {
        from = w.requested() / 1000.0;
        to = w.returned() / 1000.0;
        label = w.live() ? w.kind() + " switch" : "fresh cluster";
      }
      boolean fresh = !w.live();
      IntervalMarker pause = new IntervalMarker(from, Math.max(to, from + 0.05),
          fresh ? new Color(120, 120, 255, 50) : new Color(255, 200, 0, 110));
      pause.setLabel(label);
      pause.setLabelFont(small);
      // every other label a line lower: switches in a row (allocator, then lock) stay legible
      pause.setLabelOffset(new RectangleInsets(3 + 15 * (marked++ % 2), 3, 3, 3));
      pause.setLabelAnchor(fresh ? RectangleAnchor.CENTER : RectangleAnchor.TOP_LEFT);
      pause.setLabelTextAnchor(fresh ? TextAnchor.CENTER : TextAnchor.TOP_RIGHT);
      plot.addDomainMarker(pause);
    }
    for (Results.Latency l : run.latencies) {
      if (l.what().equals("takeover")) { // a node killed: the takeover ends this long after
        ValueMarker kill = new ValueMarker((l.at() - l.millis()) / 1000.0, new Color(0xd62728),
            new BasicStroke(1.5f));
        kill.setLabel("kill");
        kill.setLabelFont(small);
        kill.setLabelAnchor(RectangleAnchor.TOP_RIGHT);
        kill.setLabelTextAnchor(TextAnchor.TOP_LEFT);
        plot.addDomainMarker(kill);
      }
    }
    boolean fresh = run.switches.stream().anyMatch(w -> w.kind().equals(Results.Segment.FRESH));
    JFreeChart chart = new JFreeChart(r.spec.workload() + ": throughput over run " + run.index
        + " (" + r.spec.nodes() + " nodes; grey: a switch asked to answered, yellow: its pause"
        + (fresh ? ", blue: a fresh cluster)" : ")"),
        new Font(Font.SANS_SERIF, Font.BOLD, 14), plot, true);
    chart.setBackgroundPaint(Color.WHITE);
    ChartUtils.saveChartAsPNG(file.toFile(), chart, WIDTH, HEIGHT);
  }

  /**
   * The throughput plot's data: a series per strategy (its phases), then one of the samples
   * taken while switching or replacing the cluster, then one of the warm-ups; a series has a
   * gap (a null value) wherever other segments came between two of its own.
   */
  static XYSeriesCollection throughputData(Results r, Results.Run run) {
    List<Strategy> st = r.spec.strategies();
    XYSeriesCollection data = new XYSeriesCollection();
    List<XYSeries> series = new ArrayList<>();
    for (Strategy s : st) {
      XYSeries x = new XYSeries(s.toString(), false, true);
      series.add(x);
      data.addSeries(x);
    }
    XYSeries switching = new XYSeries("switching (all nodes still driving)", false, true);
    XYSeries warmup = new XYSeries("warm-up (not measured)", false, true);
    // by identity: an XYSeries's equals and hashCode follow its data, which changes here
    java.util.Map<XYSeries, Integer> lastSegment = new java.util.IdentityHashMap<>();
    for (Results.Sample p : run.samples) {
      Results.Segment g = segment(run, p.segment());
      double ops = p.millis() > 0 ? p.total() * 1000.0 / p.millis() : 0;
      double t = p.at() / 1000.0;
      XYSeries x = g.kind().equals(Results.Segment.PHASE) ? series.get(g.strategy())
          : g.kind().equals(Results.Segment.WARMUP) ? warmup : switching;
      Integer last = lastSegment.put(x, g.seq());
      if (last != null && g.seq() - last > 1) {
        x.add(t - 0.001, null); // a gap: other segments came between, not a line across them
      }
      x.add(t, ops);
    }
    data.addSeries(switching);
    data.addSeries(warmup);
    return data;
  }

  /**
   * Each strategy's operations/s against the number of nodes driving: the median over runs,
   * with a bar from the minimum to the maximum.
   */
  public static void scaling(Results r, Path file) throws IOException {
    headless();
    List<Strategy> st = r.spec.strategies();
    YIntervalSeriesCollection data = new YIntervalSeriesCollection();
    for (int i = 0; i < st.size(); i++) {
      YIntervalSeries x = new YIntervalSeries(st.get(i).toString());
      for (int k : r.spec.active()) {
        List<Double> v = Figures.throughput(r, k).get(i);
        if (!v.isEmpty()) {
          Stats s = Stats.of(v);
          x.add(k, s.median(), s.min(), s.max());
        }
      }
      data.addSeries(x);
    }
    NumberAxis nodes = new NumberAxis("nodes driving the workload");
    nodes.setStandardTickUnits(NumberAxis.createIntegerTickUnits());
    nodes.setAutoRangeIncludesZero(false);
    nodes.setLowerMargin(0.1);
    nodes.setUpperMargin(0.1);
    NumberAxis rate = new NumberAxis("operations/s, all driving nodes");
    rate.setAutoRangeIncludesZero(true);
    XYErrorRenderer renderer = new XYErrorRenderer();
    renderer.setDrawXError(false);
    renderer.setDefaultLinesVisible(true);
    renderer.setDefaultShapesVisible(true);
    for (int i = 0; i < st.size(); i++) {
      renderer.setSeriesPaint(i, COLOURS[i % COLOURS.length]);
      renderer.setSeriesStroke(i, new BasicStroke(2f));
      renderer.setSeriesLinesVisible(i, true);
    }
    renderer.setErrorPaint(Color.DARK_GRAY);
    XYPlot plot = new XYPlot(data, nodes, rate, renderer);
    plot.setBackgroundPaint(Color.WHITE);
    plot.setDomainGridlinePaint(new Color(0xdddddd));
    plot.setRangeGridlinePaint(new Color(0xdddddd));
    JFreeChart chart = new JFreeChart(r.spec.workload() + ": scaling (median of "
        + r.runs.size() + " run" + (r.runs.size() == 1 ? "" : "s") + ", bars: min to max)",
        new Font(Font.SANS_SERIF, Font.BOLD, 14), plot, true);
    chart.setBackgroundPaint(Color.WHITE);
    ChartUtils.saveChartAsPNG(file.toFile(), chart, WIDTH, HEIGHT);
  }

  private static Results.Segment segment(Results.Run run, int seq) {
    for (Results.Segment g : run.segments) {
      if (g.seq() == seq) {
        return g;
      }
    }
    throw new IllegalArgumentException("run " + run.index + " has no segment " + seq);
  }

  private static void headless() {
    System.setProperty("java.awt.headless", "true");
  }
}

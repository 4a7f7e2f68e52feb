package io.etcfs.launcher.experiment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.nio.file.Path;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(60)
class ChartsTest {
  @TempDir Path tmp;

  /** Pixels of exactly {@code rgb}: the series drawn in that colour. */
  private static int pixels(BufferedImage img, int rgb) {
    int n = 0;
    for (int y = 0; y < img.getHeight(); y++) {
      for (int x = 0; x < img.getWidth(); x++) {
        if ((img.getRGB(x, y) & 0xffffff) == rgb) {
          n++;
        }
      }
    }
    return n;
  }

  @Test
  void theThroughputPlotIsAPngWithALinePerStrategyAndTheSwitchShaded() throws Exception {
    Results r = Fixture.results();
    Path png = tmp.resolve("throughput.png");
    Charts.throughput(r, r.runs.get(0), png);
    BufferedImage img = ImageIO.read(png.toFile());
    assertEquals(Charts.WIDTH, img.getWidth());
    assertEquals(Charts.HEIGHT, img.getHeight());
    assertTrue(pixels(img, 0x1f77b4) > 200, "no etcd/arena line");
    assertTrue(pixels(img, 0xd62728) > 200, "no hazelcast/arena line");
  }

  @Test
  void theScalingPlotIsAPngWithBothStrategies() throws Exception {
    Results r = Fixture.results();
    Path png = tmp.resolve("scaling.png");
    Charts.scaling(r, png);
    BufferedImage img = ImageIO.read(png.toFile());
    assertEquals(Charts.WIDTH, img.getWidth());
    assertEquals(Charts.HEIGHT, img.getHeight());
    assertTrue(pixels(img, 0x1f77b4) > 200, "no etcd/arena curve");
    assertTrue(pixels(img, 0xd62728) > 200, "no hazelcast/arena curve");
  }

  @Test
  void aSeriesBreaksWhereOtherSegmentsCameBetweenItsOwn() throws Exception {
    Results r = Fixture.results();
    Results.Run run = r.runs.get(0);
    // a second switch after the last phase: the switching series must not join the two
    int seq = run.segments.size();
    run.segments.add(new Results.Segment(seq, Results.Segment.SWITCH, 0, 2, 4500, 5000,
        new long[] {5, 5}, 0, 1));
    run.samples.add(new Results.Sample(4750, 250, seq, new long[] {2, 3}, 0));
    run.samples.add(new Results.Sample(5000, 250, seq, new long[] {3, 2}, 0));
    org.jfree.data.xy.XYSeries switching = Charts.throughputData(r, run).getSeries(2);
    java.util.List<Number> ys = new java.util.ArrayList<>();
    for (int i = 0; i < switching.getItemCount(); i++) {
      ys.add(switching.getY(i));
    }
    // the first switch's two samples (40 ops/s), a gap, the second's (20 ops/s)
    java.util.List<Number> expected = new java.util.ArrayList<>(
        java.util.Arrays.asList(40.0, 40.0, null, 20.0, 20.0));
    assertEquals(expected, ys);
    assertEquals(8, Charts.throughputData(r, run).getSeries(0).getItemCount(),
        "etcd/arena's two phases are next to each other: no gap");
  }

  @Test
  void aPlotWithoutDataIsStillDrawn() throws Exception {
    Results r = Fixture.results();
    Results.Run empty = new Results.Run(3, r.startedAt);
    Path png = tmp.resolve("empty.png");
    Charts.throughput(r, empty, png);
    assertEquals(Charts.WIDTH, ImageIO.read(png.toFile()).getWidth());
    // the legend's sample line only
    assertTrue(pixels(ImageIO.read(png.toFile()), 0x1f77b4) < 50);
  }
}

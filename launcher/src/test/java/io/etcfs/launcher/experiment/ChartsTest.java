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

package io.etcfs.launcher.experiment;

import java.io.IOException;
import java.util.Locale;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;

/** The machine an experiment ran on, as its report names it. */
public record Machine(String host, String kernel, int cores, double memoryGiB, String jvm) {
  public static Machine here() {
    String host;
    try {
      host = InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
      host = "unknown";
    }
    return new Machine(host, System.getProperty("os.name") + " " + System.getProperty("os.version"),
        Runtime.getRuntime().availableProcessors(), totalMemoryGiB(),
        System.getProperty("java.vendor") + " " + System.getProperty("java.version"));
  }

  /** MemTotal of /proc/meminfo in GiB, or 0 where there is none. */
  private static double totalMemoryGiB() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
        if (line.startsWith("MemTotal:")) {
          long kib = Long.parseLong(line.replaceAll("[^0-9]", ""));
          return kib / 1048576.0;
        }
      }
    } catch (IOException | NumberFormatException e) {
      // not Linux, or unreadable: reported as 0
    }
    return 0;
  }

  /** The 1-minute load average now (/proc/loadavg), or -1. */
  public static double loadAverage() {
    try {
      return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
    } catch (IOException | RuntimeException e) {
      return -1;
    }
  }

  public String describe() {
    return String.format(Locale.ROOT, "%s, %s, %d cores, %.1f GiB, Java %s", host,
        kernel, cores, memoryGiB, jvm);
  }
}

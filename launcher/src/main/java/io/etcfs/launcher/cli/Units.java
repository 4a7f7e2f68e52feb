package io.etcfs.launcher.cli;

import java.time.Duration;
import java.util.Locale;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** Parsers for sizes ({@code 8G}, {@code 512M}, bytes) and durations ({@code 10s}, {@code 500ms}). */
final class Units {
  private Units() {}

  static long parseSize(String s) {
    String t = s.trim().toUpperCase(Locale.ROOT).replaceAll("I?B$", "");
    long mult = 1;
    char last = t.isEmpty() ? ' ' : t.charAt(t.length() - 1);
    int shift = "KMGTP".indexOf(last);
    if (shift >= 0) {
      mult = 1L << (10 * (shift + 1));
      t = t.substring(0, t.length() - 1);
    }
    try {
      long v = Long.parseLong(t);
      if (v <= 0) {
        throw new NumberFormatException();
      }
      return Math.multiplyExact(v, mult);
    } catch (NumberFormatException | ArithmeticException e) {
      throw new TypeConversionException("invalid size '" + s + "' (examples: 8G, 512M, 1048576)");
    }
  }

  static Duration parseDuration(String s) {
    String t = s.trim().toLowerCase(Locale.ROOT);
    try {
      if (t.endsWith("ms")) {
        return Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2)));
      }
      if (t.endsWith("s")) {
        return Duration.ofSeconds(Long.parseLong(t.substring(0, t.length() - 1)));
      }
      if (t.endsWith("m")) {
        return Duration.ofMinutes(Long.parseLong(t.substring(0, t.length() - 1)));
      }
      return Duration.ofSeconds(Long.parseLong(t));
    } catch (NumberFormatException e) {
      throw new TypeConversionException("invalid duration '" + s + "' (examples: 10s, 500ms, 2m)");
    }
  }

  static String human(long bytes) {
    String[] u = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = bytes;
    int i = 0;
    while (v >= 1024 && i < u.length - 1) {
      v /= 1024;
      i++;
    }
    return i == 0 ? bytes + " B" : String.format(Locale.ROOT, "%.1f %s", v, u[i]);
  }

  static final class Size implements ITypeConverter<Long> {
    @Override
    public Long convert(String value) {
      return parseSize(value);
    }
  }

  static final class Time implements ITypeConverter<Duration> {
    @Override
    public Duration convert(String value) {
      return parseDuration(value);
    }
  }
}

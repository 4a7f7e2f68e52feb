package io.etcfs.core.metrics;

import io.etcfs.spi.metrics.Metrics;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Prometheus' text exposition format (version 0.0.4), written by hand: one scrape's samples,
 * grouped by metric family (one HELP and TYPE line each, whichever source wrote the samples),
 * in the order families were first written.
 */
public final class Exposition implements Metrics {
  private static final Pattern NAME = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");
  private static final Pattern LABEL = Pattern.compile("[a-zA-Z_][a-zA-Z0-9_]*");

  private record Family(String type, String help, List<String> samples) {}

  private final Map<String, Family> families = new LinkedHashMap<>();

  @Override
  public void counter(String name, String help, double value, String... labels) {
    if (!name.endsWith("_total")) {
      throw new IllegalArgumentException("counter " + name + " must end with _total");
    }
    family(name, "counter", help).add(name + labels(labels, null) + " " + number(value));
  }

  @Override
  public void gauge(String name, String help, double value, String... labels) {
    family(name, "gauge", help).add(name + labels(labels, null) + " " + number(value));
  }

  @Override
  public void histogram(String name, String help, double[] upperBounds, long[] cumulative,
      long count, double sum, String... labels) {
    if (upperBounds.length != cumulative.length) {
      throw new IllegalArgumentException(name + ": " + upperBounds.length + " bounds, "
          + cumulative.length + " counts");
    }
    List<String> f = family(name, "histogram", help);
    for (int i = 0; i < upperBounds.length; i++) {
      f.add(name + "_bucket" + labels(labels, le(upperBounds[i])) + " " + cumulative[i]);
    }
    f.add(name + "_bucket" + labels(labels, "+Inf") + " " + count);
    f.add(name + "_sum" + labels(labels, null) + " " + number(sum));
    f.add(name + "_count" + labels(labels, null) + " " + count);
  }

  /** The scrape's text. */
  public String text() {
    StringBuilder b = new StringBuilder();
    families.forEach((name, f) -> {
      if (!f.help().isEmpty()) {
        b.append("# HELP ").append(name).append(' ').append(escapeHelp(f.help())).append('\n');
      }
      b.append("# TYPE ").append(name).append(' ').append(f.type()).append('\n');
      f.samples().forEach(s -> b.append(s).append('\n'));
    });
    return b.toString();
  }

  private List<String> family(String name, String type, String help) {
    if (!NAME.matcher(name).matches()) {
      throw new IllegalArgumentException("not a metric name: " + name);
    }
    Family f = families.get(name);
    if (f == null) {
      f = new Family(type, help, new ArrayList<>());
      families.put(name, f);
    } else if (!f.type().equals(type)) {
      throw new IllegalArgumentException(name + " written as " + f.type() + " and " + type);
    } else if (f.help().isEmpty() && !help.isEmpty()) {
      families.put(name, f = new Family(type, help, f.samples()));
    }
    return f.samples();
  }

  private static String labels(String[] labels, String le) {
    if (labels.length % 2 != 0) {
      throw new IllegalArgumentException("labels come in pairs: " + String.join(",", labels));
    }
    if (labels.length == 0 && le == null) {
      return "";
    }
    StringBuilder b = new StringBuilder("{");
    for (int i = 0; i < labels.length; i += 2) {
      if (!LABEL.matcher(labels[i]).matches() || labels[i].equals("le")) {
        throw new IllegalArgumentException("not a label name: " + labels[i]);
      }
      if (i > 0) {
        b.append(',');
      }
      b.append(labels[i]).append("=\"").append(escapeValue(labels[i + 1])).append('"');
    }
    if (le != null) {
      b.append(labels.length > 0 ? "," : "").append("le=\"").append(le).append('"');
    }
    return b.append('}').toString();
  }

  private static String le(double bound) {
    return BigDecimal.valueOf(bound).stripTrailingZeros().toPlainString();
  }

  static String number(double v) {
    if (Double.isNaN(v)) {
      return "NaN";
    }
    if (Double.isInfinite(v)) {
      return v > 0 ? "+Inf" : "-Inf";
    }
    if (v == Math.rint(v) && Math.abs(v) < 1e15) {
      return Long.toString((long) v);
    }
    return Double.toString(v);
  }

  private static String escapeValue(String v) {
    return v.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
  }

  private static String escapeHelp(String v) {
    return v.replace("\\", "\\\\").replace("\n", "\\n");
  }
}

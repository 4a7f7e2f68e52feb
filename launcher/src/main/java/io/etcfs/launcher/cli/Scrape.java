package io.etcfs.launcher.cli;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One scrape of a node's metrics endpoint, parsed from Prometheus' text format: the samples by
 * name (a histogram's {@code _sum} and {@code _count} are names of their own), with their labels.
 */
record Scrape(Map<String, List<Sample>> samples) {
  record Sample(Map<String, String> labels, double value) {}

  private static final HttpClient HTTP = HttpClient.newBuilder()
      .connectTimeout(Duration.ofSeconds(2)).build();

  /** Reads {@code http://ADDRESS/metrics}. */
  static Scrape fetch(String address, Duration timeout) throws IOException, InterruptedException {
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://" + address + "/metrics"))
        .timeout(timeout).GET().build();
    HttpResponse<String> r = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != 200) {
      throw new IOException("HTTP " + r.statusCode());
    }
    return parse(r.body());
  }

  static Scrape parse(String text) {
    Map<String, List<Sample>> out = new HashMap<>();
    for (String line : text.split("\n")) {
      if (line.isBlank() || line.startsWith("#")) {
        continue;
      }
      int brace = line.indexOf('{');
      int space = line.lastIndexOf(' ');
      if (space < 0) {
        continue;
      }
      String name = brace >= 0 && brace < space ? line.substring(0, brace)
          : line.substring(0, space);
      Map<String, String> labels = brace >= 0 && brace < space
          ? labels(line.substring(brace + 1, line.lastIndexOf('}', space))) : Map.of();
      double value;
      try {
        value = Double.parseDouble(line.substring(space + 1).replace("+Inf", "Infinity"));
      } catch (NumberFormatException e) {
        continue;
      }
      out.computeIfAbsent(name.strip(), k -> new ArrayList<>()).add(new Sample(labels, value));
    }
    return new Scrape(out);
  }

  private static Map<String, String> labels(String text) {
    Map<String, String> labels = new LinkedHashMap<>();
    int i = 0;
    while (i < text.length()) {
      int eq = text.indexOf('=', i);
      if (eq < 0 || eq + 1 >= text.length() || text.charAt(eq + 1) != '"') {
        break;
      }
      StringBuilder v = new StringBuilder();
      int j = eq + 2;
      for (; j < text.length() && text.charAt(j) != '"'; j++) {
        char c = text.charAt(j);
        if (c == '\\' && j + 1 < text.length()) {
          char n = text.charAt(++j);
          v.append(n == 'n' ? '\n' : n);
        } else {
          v.append(c);
        }
      }
      labels.put(text.substring(i, eq).strip(), v.toString());
      i = j + 1;
      while (i < text.length() && (text.charAt(i) == ',' || text.charAt(i) == ' ')) {
        i++;
      }
    }
    return labels;
  }

  /** The sum of {@code name}'s samples whose labels include {@code match} (name, value...). */
  double sum(String name, String... match) {
    double total = 0;
    for (Sample s : samples.getOrDefault(name, List.of())) {
      boolean all = true;
      for (int i = 0; i + 1 < match.length; i += 2) {
        all &= match[i + 1].equals(s.labels().get(match[i]));
      }
      if (all) {
        total += s.value();
      }
    }
    return total;
  }

  /** A label of {@code name}'s first sample, or {@code fallback}. */
  String label(String name, String label, String fallback) {
    List<Sample> s = samples.getOrDefault(name, List.of());
    return s.isEmpty() ? fallback : s.get(0).labels().getOrDefault(label, fallback);
  }

  boolean has(String name) {
    return samples.containsKey(name);
  }
}

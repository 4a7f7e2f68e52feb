package io.etcfs.launcher.cli;

import io.etcfs.core.check.CheckReport;
import io.etcfs.core.check.Finding;
import java.util.List;
import java.util.stream.Collectors;

/** {@code etcfs fsck --json}: the report as one JSON object on one line. */
final class FsckJson {
  private FsckJson() {}

  static String of(CheckReport r, List<String> repaired) {
    StringBuilder b = new StringBuilder("{");
    b.append("\"filesystem\":").append(str(r.fsName()));
    b.append(",\"revision\":").append(r.revision());
    b.append(",\"clean\":").append(r.clean());
    b.append(",\"findings\":").append(r.findings().stream().map(FsckJson::finding)
        .collect(Collectors.joining(",", "[", "]")));
    b.append(",\"notChecked\":").append(strings(r.notChecked()));
    b.append(",\"stats\":").append(new java.util.TreeMap<>(r.stats()).entrySet().stream()
        .map(e -> str(e.getKey()) + ":" + e.getValue()).collect(Collectors.joining(",", "{", "}")));
    if (repaired != null) {
      b.append(",\"repaired\":").append(strings(repaired));
    }
    return b.append('}').toString();
  }

  private static String finding(Finding f) {
    return "{\"kind\":" + str(f.kind()) + ",\"subject\":" + str(f.subject()) + ",\"detail\":"
        + str(f.detail()) + ",\"pending\":" + f.pending() + "}";
  }

  static String strings(List<String> l) {
    return l.stream().map(FsckJson::str).collect(Collectors.joining(",", "[", "]"));
  }

  static String str(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        default -> {
          if (c < 0x20) {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    return b.append('"').toString();
  }
}

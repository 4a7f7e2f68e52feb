package io.etcfs.shell.internal;

import io.etcfs.spi.meta.KeyValue;
import java.io.IOException;
import java.io.StringReader;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;

/** The {@code members} table: one line per membership key, aligned to fit an 80-column terminal. */
final class MemberTable {
  static final int WIDTH = 80;
  private static final String GAP = "  ";
  private static final String[] HEADER = {"NAME", "GEN", "HOST", "PID", "MOUNTPOINT", "LEASE"};
  private static final boolean[] RIGHT = {false, true, false, true, false, false};
  /** Free-text columns give up width first; ids stay whole as long as anything else can shrink. */
  private static final int[] SHRINK_FIRST = {0, 2, 4};
  private static final int MIN_WIDTH = 6;
  private static final String MORE = "...";

  private MemberTable() {}

  /** One row per key under {@code prefix}; a record that cannot be parsed shows {@code ?}. */
  static List<String[]> rows(String prefix, List<KeyValue> kvs) {
    List<String[]> rows = new ArrayList<>();
    for (KeyValue kv : kvs) {
      Properties record = parse(kv.valueString());
      rows.add(new String[] {
        kv.keyString().substring(Math.min(prefix.length(), kv.keyString().length())),
        Long.toString(kv.createRevision()),
        record.getProperty("host", "?"),
        record.getProperty("pid", "?"),
        record.getProperty("mountpoint", "?"),
        kv.lease() == 0 ? "-" : Long.toHexString(kv.lease())
      });
    }
    return rows;
  }

  static String format(List<String[]> rows) {
    int[] widths = fit(naturalWidths(rows));
    StringBuilder out = new StringBuilder(line(HEADER, widths));
    for (String[] row : rows) {
      out.append('\n').append(line(row, widths));
    }
    return out.toString();
  }

  private static int[] naturalWidths(List<String[]> rows) {
    int[] widths = Arrays.stream(HEADER).mapToInt(String::length).toArray();
    for (String[] row : rows) {
      for (int i = 0; i < row.length; i++) {
        widths[i] = Math.max(widths[i], row[i].length());
      }
    }
    return widths;
  }

  /** Narrows the widest shrinkable column, one character at a time, until the line fits. */
  private static int[] fit(int[] widths) {
    int[] all = {0, 1, 2, 3, 4, 5};
    while (total(widths) > WIDTH) {
      int column = widest(widths, SHRINK_FIRST);
      if (column < 0) {
        column = widest(widths, all);
      }
      if (column < 0) {
        break;
      }
      widths[column]--;
    }
    return widths;
  }

  private static int widest(int[] widths, int[] candidates) {
    int best = -1;
    for (int i : candidates) {
      int min = Math.max(MIN_WIDTH, HEADER[i].length());
      if (widths[i] > min && (best < 0 || widths[i] > widths[best])) {
        best = i;
      }
    }
    return best;
  }

  private static int total(int[] widths) {
    return Arrays.stream(widths).sum() + GAP.length() * (widths.length - 1);
  }

  private static String line(String[] cells, int[] widths) {
    StringBuilder line = new StringBuilder();
    for (int i = 0; i < cells.length; i++) {
      String cell = cut(cells[i], widths[i]);
      String pad = " ".repeat(widths[i] - cell.length());
      line.append(i == 0 ? "" : GAP).append(RIGHT[i] ? pad + cell : cell + pad);
    }
    return line.toString().stripTrailing();
  }

  private static String cut(String cell, int width) {
    return cell.length() <= width ? cell : cell.substring(0, width - MORE.length()) + MORE;
  }

  private static Properties parse(String text) {
    Properties record = new Properties();
    try {
      record.load(new StringReader(text));
    } catch (IOException | IllegalArgumentException e) {
      // A damaged record still gets its row: the key, revision and lease are what matter most.
      record.clear();
    }
    return record;
  }
}

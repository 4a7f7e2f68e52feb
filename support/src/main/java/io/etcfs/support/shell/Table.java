package io.etcfs.support.shell;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A table for a shell command: aligned columns that fit a terminal of {@link #WIDTH} columns
 * (free-text columns give up width first, a cut cell ends in {@code ...}), or the same rows as a
 * JSON array of objects keyed by the column names, for scripts ({@code --json}).
 *
 * <pre>
 *   Table t = new Table().text("NAME").number("GEN").text("MOUNTPOINT");
 *   t.row("node1", 12, "/mnt/a");
 *   return json ? t.json() : t.render();
 * </pre>
 */
public final class Table {
  public static final int WIDTH = 80;
  private static final String GAP = "  ";
  private static final int MIN_WIDTH = 6;
  private static final String MORE = "...";

  private final List<String> names = new ArrayList<>();
  private final List<Boolean> right = new ArrayList<>();
  private final List<Boolean> shrinkFirst = new ArrayList<>();
  private final List<Boolean> numeric = new ArrayList<>();
  private final List<Object[]> rows = new ArrayList<>();

  /** A left-aligned free-text column, the first to give up width. */
  public Table text(String name) {
    return column(name, false, true, false);
  }

  /** A left-aligned column of identifiers, kept whole as long as other columns can shrink. */
  public Table id(String name) {
    return column(name, false, false, false);
  }

  /** A right-aligned number column (a JSON number when the cell is a number). */
  public Table number(String name) {
    return column(name, true, false, true);
  }

  private Table column(String name, boolean alignRight, boolean shrink, boolean isNumber) {
    if (!rows.isEmpty()) {
      throw new IllegalStateException("columns come before rows");
    }
    names.add(name);
    right.add(alignRight);
    shrinkFirst.add(shrink);
    numeric.add(isNumber);
    return this;
  }

  /** Adds a row: one cell per column; a null cell shows as {@code -} (JSON null). */
  public Table row(Object... cells) {
    if (cells.length != names.size()) {
      throw new IllegalArgumentException(cells.length + " cells for " + names.size() + " columns");
    }
    rows.add(cells.clone());
    return this;
  }

  public int size() {
    return rows.size();
  }

  /** The table as aligned text, header first; lines have no trailing blanks. */
  public String render() {
    String[] header = names.toArray(new String[0]);
    int[] widths = fit(naturalWidths(header), header);
    StringBuilder out = new StringBuilder(line(header, widths));
    for (Object[] row : rows) {
      out.append('\n').append(line(text(row), widths));
    }
    return out.toString();
  }

  /** The rows as a JSON array of objects keyed by column name (lower-cased). */
  public String json() {
    StringBuilder out = new StringBuilder("[");
    for (int r = 0; r < rows.size(); r++) {
      out.append(r == 0 ? "" : ",").append("\n  {");
      Object[] row = rows.get(r);
      for (int c = 0; c < row.length; c++) {
        out.append(c == 0 ? "" : ", ").append(Json.quote(names.get(c).toLowerCase())).append(": ")
            .append(jsonValue(row[c], numeric.get(c)));
      }
      out.append('}');
    }
    return out.append(rows.isEmpty() ? "]" : "\n]").toString();
  }

  /** A cell: through {@link Json#value}, but a number in a text column stays a string. */
  private static String jsonValue(Object cell, boolean isNumber) {
    return cell instanceof Number && !isNumber ? Json.quote(cell.toString()) : Json.value(cell);
  }

  private static String[] text(Object[] row) {
    return Arrays.stream(row).map(c -> c == null ? "-" : c.toString()).toArray(String[]::new);
  }

  private int[] naturalWidths(String[] header) {
    int[] widths = Arrays.stream(header).mapToInt(String::length).toArray();
    for (Object[] row : rows) {
      String[] cells = text(row);
      for (int i = 0; i < cells.length; i++) {
        widths[i] = Math.max(widths[i], cells[i].length());
      }
    }
    return widths;
  }

  /** Narrows the widest shrinkable column, one character at a time, until the line fits. */
  private int[] fit(int[] widths, String[] header) {
    while (total(widths) > WIDTH) {
      int column = widest(widths, header, true);
      if (column < 0) {
        column = widest(widths, header, false);
      }
      if (column < 0) {
        break;
      }
      widths[column]--;
    }
    return widths;
  }

  private int widest(int[] widths, String[] header, boolean onlyShrinkFirst) {
    int best = -1;
    for (int i = 0; i < widths.length; i++) {
      if (onlyShrinkFirst && !shrinkFirst.get(i)) {
        continue;
      }
      int min = Math.max(MIN_WIDTH, header[i].length());
      if (widths[i] > min && (best < 0 || widths[i] > widths[best])) {
        best = i;
      }
    }
    return best;
  }

  private static int total(int[] widths) {
    return Arrays.stream(widths).sum() + GAP.length() * Math.max(0, widths.length - 1);
  }

  private String line(String[] cells, int[] widths) {
    StringBuilder line = new StringBuilder();
    for (int i = 0; i < cells.length; i++) {
      String cell = cut(cells[i], widths[i]);
      String pad = " ".repeat(Math.max(0, widths[i] - cell.length()));
      line.append(i == 0 ? "" : GAP).append(right.get(i) ? pad + cell : cell + pad);
    }
    return line.toString().stripTrailing();
  }

  private static String cut(String cell, int width) {
    return cell.length() <= width ? cell : cell.substring(0, Math.max(0, width - MORE.length()))
        + MORE;
  }
}

package io.etcfs.support.shell;

import java.util.Map;
import java.util.stream.Collectors;

/**
 * The JSON the shell commands print with {@code --json}: string literals, plain values and flat
 * objects. One writer, so every command escapes and spells values the same way.
 */
public final class Json {
  /** JSON text that goes into an object as it is (an array or object made elsewhere). */
  public record Raw(String json) {
    @Override
    public String toString() {
      return json;
    }
  }

  private Json() {}

  /** A JSON string literal. */
  public static String quote(String s) {
    StringBuilder q = new StringBuilder("\"");
    for (char ch : s.toCharArray()) {
      switch (ch) {
        case '"' -> q.append("\\\"");
        case '\\' -> q.append("\\\\");
        case '\n' -> q.append("\\n");
        case '\r' -> q.append("\\r");
        case '\t' -> q.append("\\t");
        default -> {
          if (ch < 0x20) {
            q.append(String.format("\\u%04x", (int) ch));
          } else {
            q.append(ch);
          }
        }
      }
    }
    return q.append('"').toString();
  }

  /**
   * A value: null, booleans and finite numbers as they are, {@link Raw} text as it is, anything
   * else as a string.
   */
  public static String value(Object v) {
    if (v == null) {
      return "null";
    }
    if (v instanceof Boolean || v instanceof Raw) {
      return v.toString();
    }
    if (v instanceof Number n && !(n instanceof Double d && !Double.isFinite(d))
        && !(n instanceof Float f && !Float.isFinite(f))) {
      return n.toString();
    }
    return quote(v.toString());
  }

  /** An object of the entries in their order: {@code {"key": value, ...}}. */
  public static String object(Map<String, ?> entries) {
    return entries.entrySet().stream()
        .map(e -> quote(e.getKey()) + ": " + value(e.getValue()))
        .collect(Collectors.joining(", ", "{", "}"));
  }
}

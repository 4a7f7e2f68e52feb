package io.etcfs.itests;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A systemd unit file and environment file read as systemd reads them, for running a unit's
 * command lines where systemd is not PID 1: sections of {@code Key=value} lines, the instance
 * specifier {@code %i}, and in a command line {@code ${VAR}} (exactly one argument) and a word
 * {@code $VAR} (the value split at whitespace: zero or more arguments). Anything else systemd
 * would expand (other specifiers, quoting, escapes) is refused, so a unit that starts using it
 * fails the test rather than running a different command line than systemd would.
 */
final class UnitFile {
  private final Map<String, List<String>> entries = new LinkedHashMap<>();

  private UnitFile() {}

  static UnitFile read(Path file) throws IOException {
    UnitFile u = new UnitFile();
    String section = "";
    String pending = "";
    for (String raw : Files.readAllLines(file)) {
      String line = pending + raw.strip();
      pending = "";
      if (line.endsWith("\\")) {
        pending = line.substring(0, line.length() - 1) + " ";
        continue;
      }
      if (line.isEmpty() || line.startsWith("#") || line.startsWith(";")) {
        continue;
      }
      if (line.startsWith("[") && line.endsWith("]")) {
        section = line.substring(1, line.length() - 1);
        continue;
      }
      int eq = line.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException(file + ": not Key=value: " + line);
      }
      u.entries.computeIfAbsent(section + "." + line.substring(0, eq).strip(),
          k -> new ArrayList<>()).add(line.substring(eq + 1).strip());
    }
    return u;
  }

  /** Every value of {@code key} ("Section.Key") in order. */
  List<String> all(String key) {
    return entries.getOrDefault(key, List.of());
  }

  /** The one value of {@code key}; fails if there is none or more than one. */
  String one(String key) {
    List<String> v = all(key);
    if (v.size() != 1) {
      throw new AssertionError("expected one " + key + ", found " + v);
    }
    return v.get(0);
  }

  /** {@code %i} replaced by {@code instance}, {@code %%} by {@code %}; no other specifier. */
  static String specifiers(String s, String instance) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c != '%') {
        b.append(c);
        continue;
      }
      char n = i + 1 < s.length() ? s.charAt(i + 1) : ' ';
      i++;
      switch (n) {
        case 'i' -> b.append(instance);
        case '%' -> b.append('%');
        default -> throw new IllegalArgumentException("specifier %" + n + " in: " + s);
      }
    }
    return b.toString();
  }

  /** An EnvironmentFile: {@code NAME=value} lines, comments, optionally quoted values. */
  static Map<String, String> environment(Path file) throws IOException {
    Map<String, String> env = new LinkedHashMap<>();
    for (String raw : Files.readAllLines(file)) {
      String line = raw.strip();
      if (line.isEmpty() || line.startsWith("#") || line.startsWith(";")) {
        continue;
      }
      int eq = line.indexOf('=');
      if (eq <= 0 || line.endsWith("\\")) {
        throw new IllegalArgumentException(file + ": not NAME=value: " + line);
      }
      String value = line.substring(eq + 1).strip();
      if (value.length() >= 2 && (value.charAt(0) == '"' || value.charAt(0) == '\'')
          && value.charAt(value.length() - 1) == value.charAt(0)) {
        value = value.substring(1, value.length() - 1);
      }
      if (value.contains("\\") || value.contains("\"") || value.contains("'")) {
        throw new IllegalArgumentException(file + ": escapes and inner quotes are not read "
            + "here: " + line);
      }
      env.put(line.substring(0, eq).strip(), value);
    }
    return env;
  }

  private static final Pattern BRACED = Pattern.compile("\\$\\{([A-Za-z_][A-Za-z0-9_]*)}");
  private static final Pattern WORD = Pattern.compile("\\$([A-Za-z_][A-Za-z0-9_]*)");

  /** The variables a command line names, braced or not. */
  static List<String> variables(String commandLine) {
    List<String> names = new ArrayList<>();
    Matcher b = BRACED.matcher(commandLine);
    while (b.find()) {
      names.add(b.group(1));
    }
    for (String w : commandLine.split("\\s+")) {
      Matcher m = WORD.matcher(w);
      if (m.matches()) {
        names.add(m.group(1));
      }
    }
    return names;
  }

  /**
   * A command line (ExecStart= and the like) as the argument vector systemd would execute:
   * specifiers first, then words split at whitespace and variables expanded from {@code env}
   * (an unset one is empty, as systemd has it).
   */
  static List<String> command(String line, String instance, Map<String, String> env) {
    String s = specifiers(line, instance);
    if (!s.isEmpty() && "-@+!:".indexOf(s.charAt(0)) >= 0) {
      throw new IllegalArgumentException("command prefixes are not read here: " + line);
    }
    if (s.contains("\"") || s.contains("'") || s.contains("\\")) {
      throw new IllegalArgumentException("quoting is not read here: " + line);
    }
    List<String> argv = new ArrayList<>();
    for (String word : s.strip().split("\\s+")) {
      Matcher w = WORD.matcher(word);
      if (w.matches()) {
        String v = env.getOrDefault(w.group(1), "").strip();
        if (!v.isEmpty()) {
          argv.addAll(List.of(v.split("\\s+")));
        }
        continue;
      }
      Matcher b = BRACED.matcher(word);
      StringBuilder out = new StringBuilder();
      while (b.find()) {
        b.appendReplacement(out, Matcher.quoteReplacement(env.getOrDefault(b.group(1), "")));
      }
      b.appendTail(out);
      if (out.indexOf("$") >= 0) {
        throw new IllegalArgumentException("a '$' that is no variable here: " + word);
      }
      argv.add(out.toString());
    }
    return argv;
  }
}

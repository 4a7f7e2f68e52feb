package io.etcfs.launcher;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;

/**
 * The one line a user sees for a failure: the reason, not the reflective or asynchronous wrapper
 * it reached us in. Components are constructed by SCR through reflection and much of the start
 * runs on futures, so the exception that arrives is often an InvocationTargetException or an
 * ExecutionException whose own text says nothing ("java.lang.reflect.InvocationTargetException").
 */
public final class Failures {
  /** Types that only carry their cause; whatever message they have repeats it. */
  private static final Set<String> WRAPPERS = Set.of(
      "java.lang.reflect.InvocationTargetException",
      "java.lang.reflect.UndeclaredThrowableException",
      "java.lang.ExceptionInInitializerError",
      "java.util.concurrent.ExecutionException",
      "java.util.concurrent.CompletionException");

  /** Types whose name adds nothing to a message written for the user. */
  private static final Set<String> PLAIN = Set.of(
      "java.lang.RuntimeException",
      "java.lang.Exception",
      "java.lang.IllegalStateException",
      "java.lang.IllegalArgumentException",
      "org.osgi.framework.BundleException");

  /** Types whose message is generic and whose cause is the reason (Felix: "Activator start error"). */
  private static final Set<String> CONTEXT_ONLY = Set.of("org.osgi.framework.BundleException");

  private Failures() {}

  /** One line for {@code t}: the message of the first exception in its chain that has one of its own. */
  public static String describe(Throwable t) {
    List<Link> chain = new ArrayList<>();
    Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
    for (Throwable c = t; c != null && seen.add(c); c = c.getCause()) {
      chain.add(new Link(c.getClass().getName(), c.getMessage(),
          c.getCause() == null ? null : c.getCause().toString()));
    }
    return describe(chain);
  }

  /**
   * The same for a stack trace as text ({@code printStackTrace} output, as SCR keeps a failed
   * component's {@code failure}): its first line and each {@code Caused by:} line form the chain.
   */
  public static String describeTrace(String trace) {
    if (trace == null || trace.isBlank()) {
      return "";
    }
    List<String> heads = new ArrayList<>();
    for (String line : trace.lines().toList()) {
      if (heads.isEmpty() && !line.isBlank()) {
        heads.add(line.strip());
      } else if (line.startsWith("Caused by: ")) {
        heads.add(line.substring("Caused by: ".length()).strip());
      }
    }
    List<Link> chain = new ArrayList<>();
    for (int i = 0; i < heads.size(); i++) {
      String h = heads.get(i);
      String next = i + 1 < heads.size() ? heads.get(i + 1) : null;
      int colon = h.indexOf(": ");
      String type = colon > 0 ? h.substring(0, colon) : h;
      if (!isTypeName(type)) {
        chain.add(new Link("", h, next)); // not a Java header: take the line as it is
      } else {
        chain.add(new Link(type, colon > 0 ? h.substring(colon + 2) : null, next));
      }
    }
    return describe(chain);
  }

  /**
   * One exception of a chain.
   *
   * @param type its class name ("" when unknown)
   * @param message its own message, or null
   * @param cause its cause as {@code toString()} shows it, or null if it has none
   */
  private record Link(String type, String message, String cause) {
    boolean says() {
      return message != null && !message.isBlank() && !message.equals(cause);
    }
  }

  private static String describe(List<Link> chain) {
    if (chain.isEmpty()) {
      return "";
    }
    int i = 0;
    while (i + 1 < chain.size()
        && (WRAPPERS.contains(chain.get(i).type()) || !chain.get(i).says())) {
      i++;
    }
    Link l = chain.get(i);
    String line = line(l);
    if (CONTEXT_ONLY.contains(l.type()) && i + 1 < chain.size()) {
      String cause = describe(chain.subList(i + 1, chain.size()));
      if (!line.contains(cause)) {
        line = line.replaceAll("\\.$", "") + ": " + cause;
      }
    }
    return line;
  }

  private static String line(Link l) {
    String simple = l.type().substring(l.type().lastIndexOf('.') + 1);
    String m = l.message() == null ? "" : l.message().lines().findFirst().orElse("").strip();
    if (m.isEmpty()) {
      return simple.isEmpty() ? "unknown failure" : simple;
    }
    boolean plain = l.type().isEmpty() || PLAIN.contains(l.type())
        || l.type().startsWith("io.etcfs.");
    return plain ? m : simple + ": " + m;
  }

  private static boolean isTypeName(String s) {
    return s.matches("([a-zA-Z_$][\\w$]*\\.)+[A-Z][\\w$]*");
  }
}

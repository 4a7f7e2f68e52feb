package io.etcfs.launcher.node;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Collection;
import java.util.TreeSet;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;

/**
 * Runs one Gogo command line in the node's framework, for {@code etcfs shell}. Gogo's
 * CommandProcessor lives in the bundles' class space, so its methods are called reflectively
 * through the interfaces loaded from the Gogo runtime bundle.
 */
public final class GogoExec {
  private static final String PROCESSOR = "org.apache.felix.service.command.CommandProcessor";
  private static final String SESSION = "org.apache.felix.service.command.CommandSession";
  /** The session variable through which Gogo lists its commands (CommandSessionImpl.COMMANDS). */
  private static final String COMMANDS = ".commands";

  private GogoExec() {}

  /** What to do with an open session; its result is the request's exit status. */
  private interface SessionWork {
    int run(Object session, Class<?> sessionType) throws ReflectiveOperationException;
  }

  /**
   * Executes {@code command}, writing its output and its result to {@code out}.
   *
   * @return 0 on success, 1 if the command failed (its one-line message is written to
   *     {@code out}: an unknown command gives Gogo's "Command not found: x")
   */
  public static int execute(BundleContext ctx, String command, PrintStream out) {
    return withSession(ctx, out, (session, sType) -> {
      Object result = sType.getMethod("execute", CharSequence.class).invoke(session, command);
      if (result != null) {
        Method format = sType.getMethod("format", Object.class, int.class);
        out.println(format.invoke(session, result, 0));
      }
      return 0;
    });
  }

  /**
   * Lists every command registered in the node, one {@code scope:function} a line, sorted: what
   * the shell's tab completion offers.
   */
  public static int commands(BundleContext ctx, PrintStream out) {
    return withSession(ctx, out, (session, sType) -> {
      Object names = sType.getMethod("get", String.class).invoke(session, COMMANDS);
      if (!(names instanceof Collection<?> c)) {
        out.println("etcfs: this Gogo runtime does not list its commands");
        return 1;
      }
      new TreeSet<>(c.stream().map(String::valueOf).toList()).forEach(out::println);
      return 0;
    });
  }

  private static int withSession(BundleContext ctx, PrintStream out, SessionWork work) {
    ServiceReference<?> ref = Services.find(ctx, PROCESSOR);
    Object processor = ref == null ? null : ctx.getService(ref);
    if (processor == null) {
      out.println("etcfs: the Gogo shell runtime is not running on this node");
      return 1;
    }
    try {
      ClassLoader loader = processor.getClass().getClassLoader();
      Class<?> pType = Class.forName(PROCESSOR, false, loader);
      Class<?> sType = Class.forName(SESSION, false, loader);
      InputStream in = new ByteArrayInputStream(new byte[0]);
      Object session = pType.getMethod("createSession", InputStream.class, OutputStream.class,
          OutputStream.class).invoke(processor, in, out, out);
      try {
        return work.run(session, sType);
      } finally {
        sType.getMethod("close").invoke(session);
      }
    } catch (InvocationTargetException e) {
      out.println("etcfs: " + oneLine(e.getCause()));
      return 1;
    } catch (ReflectiveOperationException e) {
      out.println("etcfs: cannot reach the Gogo shell: " + e);
      return 1;
    } finally {
      ctx.ungetService(ref);
    }
  }

  /**
   * A failed command's message as one line: a command's exception may carry no message (then
   * its type names it) or several lines (the first says what went wrong).
   */
  static String oneLine(Throwable t) {
    String m = t.getMessage();
    if (m == null || m.isBlank()) {
      return t.getClass().getSimpleName();
    }
    return m.strip().lines().findFirst().orElse(m);
  }
}

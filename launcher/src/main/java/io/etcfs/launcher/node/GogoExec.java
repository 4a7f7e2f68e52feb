package io.etcfs.launcher.node;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;

/**
 * Runs one Gogo command line in the node's framework, for {@code etcfs shell -c}. Gogo's
 * CommandProcessor lives in the bundles' class space, so its three methods are called
 * reflectively through the interfaces loaded from the Gogo runtime bundle.
 */
public final class GogoExec {
  private static final String PROCESSOR = "org.apache.felix.service.command.CommandProcessor";
  private static final String SESSION = "org.apache.felix.service.command.CommandSession";

  private GogoExec() {}

  /**
   * Executes {@code command}, writing its output and its result to {@code out}.
   *
   * @return 0 on success, 1 if the command failed (its message is written to {@code out})
   */
  public static int execute(BundleContext ctx, String command, PrintStream out) {
    ServiceReference<?> ref = Services.find(ctx, PROCESSOR);
    if (ref == null) {
      out.println("etcfs: the Gogo shell runtime is not running on this node");
      return 1;
    }
    Object processor = ctx.getService(ref);
    try {
      ClassLoader loader = processor.getClass().getClassLoader();
      Class<?> pType = Class.forName(PROCESSOR, false, loader);
      Class<?> sType = Class.forName(SESSION, false, loader);
      InputStream in = new ByteArrayInputStream(new byte[0]);
      Object session = pType.getMethod("createSession", InputStream.class, OutputStream.class,
          OutputStream.class).invoke(processor, in, out, out);
      try {
        Object result = sType.getMethod("execute", CharSequence.class).invoke(session, command);
        if (result != null) {
          Method format = sType.getMethod("format", Object.class, int.class);
          out.println(format.invoke(session, result, 0));
        }
        return 0;
      } finally {
        sType.getMethod("close").invoke(session);
      }
    } catch (InvocationTargetException e) {
      Throwable cause = e.getCause();
      out.println("etcfs: " + (cause.getMessage() == null ? cause.toString() : cause.getMessage()));
      return 1;
    } catch (ReflectiveOperationException e) {
      out.println("etcfs: cannot reach the Gogo shell: " + e);
      return 1;
    } finally {
      ctx.ungetService(ref);
    }
  }
}

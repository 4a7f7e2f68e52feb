package io.etcfs.launcher.node;

import io.etcfs.launcher.Failures;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.Map;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;

/**
 * Writes configurations through the framework's Configuration Admin. The launcher sits outside
 * the framework and does not share the bundles' class space, so it calls the two methods it needs
 * reflectively through the interface loaded from the Configuration Admin bundle itself.
 */
public final class Configs {
  private static final String CM = "org.osgi.service.cm.ConfigurationAdmin";
  private static final String CONFIGURATION = "org.osgi.service.cm.Configuration";

  private Configs() {}

  public static void apply(BundleContext ctx, Map<String, Hashtable<String, Object>> configs) {
    for (Map.Entry<String, Hashtable<String, Object>> e : configs.entrySet()) {
      update(ctx, e.getKey(), e.getValue());
    }
  }

  /** Creates or replaces the configuration of {@code pid}, bound to no bundle location. */
  public static void update(BundleContext ctx, String pid, Hashtable<String, Object> props) {
    ServiceReference<?> ref = Services.find(ctx, CM);
    if (ref == null) {
      throw new IllegalStateException("Configuration Admin is not running in the framework");
    }
    Object cm = ctx.getService(ref);
    try {
      ClassLoader loader = cm.getClass().getClassLoader();
      Class<?> cmType = Class.forName(CM, false, loader);
      Class<?> cfgType = Class.forName(CONFIGURATION, false, loader);
      Method get = cmType.getMethod("getConfiguration", String.class, String.class);
      Object cfg = get.invoke(cm, pid, "?");
      cfgType.getMethod("update", Dictionary.class).invoke(cfg, props);
    } catch (InvocationTargetException e) {
      throw new IllegalStateException("cannot configure " + pid + ": " + Failures.describe(e),
          e.getCause());
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot configure " + pid + ": " + e, e);
    } finally {
      ctx.ungetService(ref);
    }
  }
}

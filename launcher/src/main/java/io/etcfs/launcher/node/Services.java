package io.etcfs.launcher.node;

import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceReference;

/** Service look-up from outside the bundles' class space. */
final class Services {
  private Services() {}

  /**
   * The best reference registered under {@code className}, or null. Looks through every
   * registration, not only those whose class the launcher's loader agrees with: when the launcher
   * runs on a class path that happens to hold the same API (a test JVM), the ordinary look-up
   * would hide the framework's services from it.
   */
  static ServiceReference<?> find(BundleContext ctx, String className) {
    try {
      ServiceReference<?>[] refs = ctx.getAllServiceReferences(className, null);
      if (refs == null || refs.length == 0) {
        return null;
      }
      ServiceReference<?> best = refs[0];
      for (ServiceReference<?> r : refs) {
        if (r.compareTo(best) > 0) {
          best = r;
        }
      }
      return best;
    } catch (InvalidSyntaxException e) {
      throw new IllegalStateException("cannot happen: no filter given", e);
    }
  }

  /** The installed bundle named {@code symbolicName}. */
  static Bundle bundle(BundleContext ctx, String symbolicName) {
    for (Bundle b : ctx.getBundles()) {
      if (symbolicName.equals(b.getSymbolicName())) {
        return b;
      }
    }
    throw new IllegalStateException("bundle " + symbolicName + " is not installed");
  }
}

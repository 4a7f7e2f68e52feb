package io.etcfs.launcher.node;

import java.util.Arrays;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleEvent;
import org.osgi.framework.ServiceEvent;
import org.osgi.framework.SynchronousBundleListener;

/**
 * With {@code -Detcfs.startup.trace=true}: logs, with the time since the process started, when
 * each bundle has started and each service is registered, to find where a node's start goes.
 */
final class StartupTrace {
  private StartupTrace() {}

  static void attach(BundleContext ctx, StartupClock clock) {
    if (!Boolean.getBoolean("etcfs.startup.trace")) {
      return;
    }
    ctx.addBundleListener((SynchronousBundleListener) e -> {
      if (e.getType() == BundleEvent.STARTED || e.getType() == BundleEvent.STARTING) {
        clock.trace("bundle " + e.getBundle().getSymbolicName()
            + (e.getType() == BundleEvent.STARTED ? " started" : " starting"));
      }
    });
    ctx.addServiceListener(e -> {
      if (e.getType() == ServiceEvent.REGISTERED) {
        clock.trace("service " + Arrays.toString(
            (String[]) e.getServiceReference().getProperty("objectClass")));
      }
    });
  }
}

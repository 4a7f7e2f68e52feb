package io.etcfs.fuse.internal;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;

/**
 * Binds libfuse while the node is still connecting to etcd and joining. jnr-ffi generates the
 * native bindings and callback classes of the FUSE front end on first use, which took about half a
 * second of a node's start when it happened only once the filesystem was ready to mount; done
 * here, on a thread of its own as soon as the bundle starts, it overlaps that wait. The instance it
 * builds is thrown away; the generated classes are what is kept.
 */
@Component(immediate = true, service = {}, configurationPolicy = ConfigurationPolicy.IGNORE)
public final class FuseWarmup {
  private static final Logger LOG = System.getLogger(FuseWarmup.class.getName());

  @Activate
  public FuseWarmup(org.osgi.framework.BundleContext context) {
    if ("lowlevel".equals(context.getProperty("etcfs.frontend"))) {
      return; // the node mounts through libfuse 3: binding libfuse 2 would only cost its start
    }
    Thread t = new Thread(FuseWarmup::warm, "etcfs-fuse-warmup");
    t.setDaemon(true);
    t.start();
  }

  private static void warm() {
    long t0 = System.nanoTime();
    try {
      FuseFrontend.withBundleLoader(() -> {
        LibfuseProbe.check();
        return new EtcfsFuse(null, true, true);
      });
      LOG.log(Level.DEBUG, "libfuse bound in {0} ms", (System.nanoTime() - t0) / 1_000_000);
    } catch (RuntimeException | LinkageError e) {
      // The mount itself binds again and reports whatever is wrong with one line.
      LOG.log(Level.DEBUG, "warming libfuse failed: {0}", e.toString());
    }
  }
}

package io.etcfs.launcher.node;

import io.etcfs.launcher.Failures;
import java.io.IOException;
import java.io.StringReader;
import java.lang.reflect.InvocationTargetException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.Properties;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;

/**
 * The lock backend recorded in the filesystem record, read by the node itself once its etcd
 * client is up, when {@code mount} was not told one. The CLI then needs no etcd round trip before
 * it starts the node, and checks etcd while the node's JVM boots. Reflective, because the
 * launcher does not share the bundles' class space.
 */
final class RecordedBackend {
  private static final String META_STORE = "io.etcfs.spi.meta.MetaStore";

  private RecordedBackend() {}

  static String read(BundleContext ctx, String fsName, Duration timeout)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    ServiceReference<?> ref;
    Object store;
    // SCR activates the client on Configuration Admin's thread. getService waits for that, but
    // only as long as SCR's lock timeout (5 s), then answers null: on a loaded machine the
    // activation takes longer, so ask again until it is done, has failed, or the time is up.
    while ((ref = Services.find(ctx, META_STORE)) == null
        || (store = ctx.getService(ref)) == null) {
      Health.Report r = Health.check(ctx);
      if (r.failed() || System.nanoTime() > deadline) {
        throw new IllegalStateException(r.components().stream()
            .filter(c -> c.state().equals("FAILED_ACTIVATION") && c.bundle().contains("etcd"))
            .map(Health.Component::problem).findFirst()
            .or(() -> r.problems().stream().filter(p -> p.contains("etcd")).findFirst())
            .orElse("the etcd client did not start within " + timeout.toSeconds() + " s"));
      }
      Thread.sleep(10);
    }
    try {
      Object found = store.getClass().getMethod("get", byte[].class).invoke(store,
          ("/etcfs/" + fsName + "/fs").getBytes(StandardCharsets.UTF_8));
      Optional<?> kv = (Optional<?>) found;
      if (kv.isEmpty()) {
        throw new IllegalStateException("filesystem '" + fsName + "' is not formatted (no "
            + "/etcfs/" + fsName + "/fs in etcd): run etcfs format first");
      }
      Object text = kv.get().getClass().getMethod("valueString").invoke(kv.get());
      Properties record = new Properties();
      record.load(new StringReader((String) text));
      return record.getProperty("lockBackend", "etcd");
    } catch (InvocationTargetException e) {
      throw new IllegalStateException("reading the filesystem record: " + Failures.describe(e),
          e.getCause());
    } catch (ReflectiveOperationException | IOException e) {
      throw new IllegalStateException("reading the filesystem record: " + e, e);
    } finally {
      ctx.ungetService(ref);
    }
  }
}

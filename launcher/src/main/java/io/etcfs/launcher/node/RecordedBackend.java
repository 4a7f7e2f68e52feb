package io.etcfs.launcher.node;

import io.etcfs.launcher.Failures;
import java.lang.reflect.InvocationTargetException;
import java.time.Duration;
import java.util.Optional;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;

/**
 * The lock backend and allocator recorded in the filesystem record, read by the node itself
 * once its etcd client is up, when {@code mount} was not told them. The CLI then needs no etcd round trip before
 * it starts the node, and checks etcd while the node's JVM boots. Reflective, because the
 * launcher does not share the bundles' class space (it decodes the record with the API bundle's
 * {@code FsRecord}).
 */
final class RecordedBackend {
  private static final String META_STORE = "io.etcfs.spi.meta.MetaStore";
  private static final String API_BUNDLE = "io.etcfs.etcfs-api";

  private RecordedBackend() {}

  /** What the record names: the lock backend and the allocator. */
  record Backends(String lock, String alloc) {}

  static Backends read(BundleContext ctx, String fsName, Duration timeout)
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
      // The API's own keyspace and record parser, as the node's bundles see them: the node's
      // class path holds no bundle's classes.
      Bundle api = Services.bundle(ctx, API_BUNDLE);
      Class<?> keyspace = api.loadClass("io.etcfs.spi.fs.Keyspace");
      Class<?> fsRecord = api.loadClass("io.etcfs.spi.fs.FsRecord");
      Object space = keyspace.getMethod("of", String.class).invoke(null, fsName);
      Object found = store.getClass().getMethod("get", byte[].class).invoke(store,
          keyspace.getMethod("record").invoke(space));
      Optional<?> kv = (Optional<?>) found;
      if (kv.isEmpty()) {
        throw new IllegalStateException("filesystem '" + fsName + "' is not formatted (no "
            + keyspace.getMethod("key", String.class).invoke(space,
                keyspace.getField("RECORD").get(null))
            + " in etcd): run etcfs format first");
      }
      Object value = kv.get().getClass().getMethod("value").invoke(kv.get());
      Object record = fsRecord.getMethod("decode", byte[].class).invoke(null, value);
      return new Backends((String) fsRecord.getMethod("lockBackend").invoke(record),
          (String) fsRecord.getMethod("allocBackend").invoke(record));
    } catch (InvocationTargetException e) {
      throw new IllegalStateException("reading the filesystem record: " + Failures.describe(e),
          e.getCause());
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("reading the filesystem record: " + e, e);
    } finally {
      ctx.ungetService(ref);
    }
  }
}

package io.etcfs.launcher.node;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.stream.Stream;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleException;
import org.osgi.framework.launch.Framework;
import org.osgi.framework.launch.FrameworkFactory;

/**
 * One node's OSGi runtime: a Felix framework with every bundle of the distribution's
 * {@code bundle/} directory, configured through Configuration Admin from a {@link NodeSpec}.
 */
public final class NodeRuntime implements AutoCloseable {
  private final Framework framework;

  /** How long a node waits for its etcd client before giving up on reading the record. */
  private static final java.time.Duration RECORD_TIMEOUT = java.time.Duration.ofSeconds(60);

  private static final String SHELL_BUNDLE = "io.etcfs.shell";

  private NodeRuntime(Framework framework) {
    this.framework = framework;
  }

  /** Starts a framework with every bundle in {@code bundleDir} and configures it for the node. */
  public static NodeRuntime start(NodeSpec spec, Path bundleDir, boolean interactiveShell)
      throws IOException, BundleException {
    return start(spec, bundleDir, interactiveShell, new StartupClock());
  }

  static NodeRuntime start(NodeSpec spec, Path bundleDir, boolean interactiveShell,
      StartupClock clock) throws IOException, BundleException {
    Path cache = BundleCache.prepare(spec.cacheDir(), bundleDir);
    // Hazelcast's bundle activator fails on a null context class loader unless its scripting
    // support is off; and a filesystem node has no business phoning home.
    System.setProperty("hazelcast.osgi.jsr223.disabled", "true");
    System.setProperty("hazelcast.phone.home.enabled", "false");
    Framework fw = ServiceLoader.load(FrameworkFactory.class).iterator().next()
        .newFramework(frameworkProperties(cache, bundleDir.getParent(), interactiveShell));
    // JLine finds its terminal providers, and vert.x its logger, through the context class
    // loader; the launcher's own loader would hand them the wrong classes.
    Thread.currentThread().setContextClassLoader(null);
    fw.init();
    clock.trace("framework initialised");
    StartupTrace.attach(fw.getBundleContext(), clock);
    NodeRuntime runtime = new NodeRuntime(fw);
    try {
      List<Bundle> bundles = runtime.installAll(bundleDir);
      clock.trace("installed");
      fw.start();
      clock.mark("framework");
      // The shell bundle first: its session listener must be in place before gogo.jline's
      // shell, which starts with the Gogo runtime, runs its profile (the first command line of
      // the node's own shell), or the etcfs commands' words would not complete there.
      bundles.sort(java.util.Comparator.comparing(
          (Bundle b) -> !SHELL_BUNDLE.equals(b.getSymbolicName())));
      for (Bundle b : bundles) {
        if (b.getHeaders().get("Fragment-Host") == null) {
          b.start();
        }
      }
      clock.mark("bundles");
      // Components wait for their configuration (policy REQUIRE), so configure once
      // Configuration Admin is up, which it is as soon as its bundle has started. Without a
      // lock backend in the spec, the etcd client is configured first and the recorded backend
      // read through it before anything else is configured.
      BundleContext ctx = fw.getBundleContext();
      Map<String, Hashtable<String, Object>> configs = NodeConfigs.of(spec);
      if (spec.lockBackend().isEmpty()) {
        Configs.update(ctx, NodeConfigs.ETCD, configs.remove(NodeConfigs.ETCD));
        String backend = RecordedBackend.read(ctx, spec.fsName(), RECORD_TIMEOUT);
        clock.mark("backend");
        configs = NodeConfigs.of(spec.withLockBackend(backend));
        configs.remove(NodeConfigs.ETCD);
      }
      Configs.apply(ctx, configs);
      clock.trace("configured");
    } catch (IOException | BundleException | RuntimeException e) {
      runtime.close();
      throw e;
    } catch (InterruptedException e) {
      runtime.close();
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while starting", e);
    }
    return runtime;
  }

  private static Map<String, String> frameworkProperties(Path cache, Path home, boolean shell)
      throws IOException {
    Map<String, String> p = new HashMap<>();
    // The cache is kept between starts of the same bundles (installing them again, with their
    // embedded jars, was the largest part of a node's start); BundleCache names it after the
    // bundles, so a changed tarball always starts from an empty one.
    p.put("org.osgi.framework.storage", cache.toString());
    // Configuration Admin persists configurations; a kept cache must not hand components the
    // previous start's configuration before this start's is applied, so they live in a
    // directory emptied at every start.
    p.put("felix.cm.dir", BundleCache.freshConfigDir(cache).toString());
    // jffi (FUSE) uses sun.misc.Unsafe for its fast memory path; the fencing bundle opens block
    // devices with O_DIRECT (com.sun.nio.file.ExtendedOpenOption) for the device heartbeat.
    p.put("org.osgi.framework.system.packages.extra", "sun.misc,com.sun.nio.file");
    // Without a terminal, Gogo's shell runs no interactive session and must not stop the
    // framework when its (empty) session ends; in the foreground, leaving the shell stops the node.
    p.put("gosh.args", shell ? "" : "--nointeractive --noshutdown");
    if (!shell) {
      p.put("gosh.home", home.resolve("etc/background-shell").toString());
    }
    p.put("felix.log.level", "1");
    return p;
  }

  private List<Bundle> installAll(Path bundleDir) throws IOException, BundleException {
    BundleContext ctx = framework.getBundleContext();
    List<Bundle> installed = new ArrayList<>();
    try (Stream<Path> jars = Files.list(bundleDir)) {
      for (Path jar : jars.filter(p -> p.toString().endsWith(".jar")).sorted().toList()) {
        installed.add(ctx.installBundle(jar.toUri().toString()));
      }
    }
    if (installed.isEmpty()) {
      throw new IOException("no bundles in " + bundleDir);
    }
    return installed;
  }

  public BundleContext context() {
    return framework.getBundleContext();
  }

  public Framework framework() {
    return framework;
  }

  /** Waits until the framework has stopped (after {@link #close()} or a stop from inside). */
  public void awaitStop() throws InterruptedException {
    framework.waitForStop(0);
  }

  /**
   * Stops every bundle: the fencing bundle's deactivation is the node's clean leave (lease
   * revoked, membership gone). Bounded so that a wedged bundle cannot keep the node alive.
   */
  @Override
  public void close() {
    try {
      framework.stop();
      framework.waitForStop(Duration.ofSeconds(30).toMillis());
    } catch (BundleException e) {
      throw new IllegalStateException("framework did not stop: " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}

package io.etcfs.launcher.node;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Hashtable;
import java.util.LinkedHashMap;
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

  /**
   * Started before the other bundles: Configuration Admin, SCR and the OSGi API bundles it needs,
   * etcfs's API, the core and the etcd client — everything the etcd client's activation depends
   * on.
   */
  private static final List<String> FIRST = List.of("org.osgi.util.function",
      "org.osgi.util.promise", "org.osgi.service.component", "org.apache.felix.configadmin",
      "org.apache.felix.scr", "io.etcfs.etcfs-api", "io.etcfs.etcfs-core", "io.etcfs.etcd-client");

  private static final String HAZELCAST_BACKEND = "hazelcast";
  /** The framework property naming the front end (NodeSpec.LOWLEVEL or HIGHLEVEL). */
  public static final String FRONTEND_PROPERTY = "etcfs.frontend";

  /**
   * The Hazelcast lock backend's bundles: installed always, started only when the configuration
   * selects that backend (an embedded Hazelcast is 17 MB of classes for a backend most nodes do
   * not use); {@link #startBackend} starts them later.
   */
  static final List<String> HAZELCAST = List.of("com.hazelcast", "io.etcfs.lock-hazelcast");

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
    spec = Frontends.resolve(spec);
    Path cache = BundleCache.prepare(spec.cacheDir(), bundleDir);
    // Hazelcast's bundle activator fails on a null context class loader unless its scripting
    // support is off; and a filesystem node has no business phoning home.
    System.setProperty("hazelcast.osgi.jsr223.disabled", "true");
    System.setProperty("hazelcast.phone.home.enabled", "false");
    if (!interactiveShell) {
      // gogo.jline takes the system terminal even without a session; a background node has
      // none (its input is /dev/null), and JLine's search for one — it runs stty and friends —
      // cost a start tens of milliseconds and a warning in the log.
      System.setProperty("org.jline.terminal.type", "dumb");
    }
    Framework fw = ServiceLoader.load(FrameworkFactory.class).iterator().next()
        .newFramework(frameworkProperties(cache, bundleDir.getParent(), interactiveShell,
            spec.frontend()));
    // JLine finds its terminal providers, and vert.x its logger, through the context class
    // loader; the launcher's own loader would hand them the wrong classes.
    Thread.currentThread().setContextClassLoader(null);
    fw.init();
    clock.trace("framework initialised");
    StartupTrace.attach(fw.getBundleContext(), clock);
    NodeRuntime runtime = new NodeRuntime(fw);
    try {
      Map<String, Bundle> bundles = runtime.installAll(bundleDir);
      clock.trace("installed");
      // Starts no bundle: every start below is transient, so a kept cache holds none marked
      // started and the order is this method's.
      fw.start();
      clock.mark("framework");
      // Components wait for their configuration (policy REQUIRE). The etcd client's activation
      // (connecting jetcd: vert.x, gRPC and Netty load and warm up) is the longest single step of
      // a start, so Configuration Admin, SCR, the core and the etcd client start first and the
      // client is configured at once: SCR activates it on Configuration Admin's thread while this
      // one starts the other bundles. Without a lock backend in the spec, the recorded one is
      // then read through the client.
      BundleContext ctx = fw.getBundleContext();
      String backend = spec.lockBackend();
      startAll(bundles, FIRST);
      Map<String, Hashtable<String, Object>> configs = settings(NodeConfigs.of(spec));
      Configs.update(ctx, NodeConfigs.ETCD, configs.remove(NodeConfigs.ETCD));
      startAll(bundles, rest(bundles, backend));
      clock.mark("bundles");
      if (backend.isEmpty() || spec.allocBackend().isEmpty()) {
        RecordedBackend.Backends recorded = RecordedBackend.read(ctx, spec.fsName(),
            RECORD_TIMEOUT);
        clock.mark("backend");
        boolean hazelcastStarted = backend.equals(HAZELCAST_BACKEND);
        backend = backend.isEmpty() ? recorded.lock() : backend;
        if (backend.equals(HAZELCAST_BACKEND) && !hazelcastStarted) {
          startAll(bundles, HAZELCAST);
        }
        String alloc = spec.allocBackend().isEmpty() ? recorded.alloc() : spec.allocBackend();
        configs = settings(NodeConfigs.of(spec.withLockBackend(backend).withAllocBackend(alloc)));
        configs.remove(NodeConfigs.ETCD);
      }
      // The other configurations only now, every bundle started, in NodeConfigs' order, which
      // puts the front end's last: the core registers its Vfs in its constructor, before SCR
      // binds its lock and allocator backends, so a front end already configured would be
      // activated inside that registration and mount a filesystem that answers EIO ("no lock
      // backend is bound") until the bindings land. Configured last, it is activated after.
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

  /** The node's configurations with the component settings of {@code ETCFS_NODE_CONFIG}. */
  private static Map<String, Hashtable<String, Object>> settings(
      Map<String, Hashtable<String, Object>> configs) {
    return NodeConfigs.withSettings(configs, System.getenv(NodeConfigs.SETTINGS_ENV));
  }

  private static Map<String, String> frameworkProperties(Path cache, Path home, boolean shell,
      String frontend)
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
    // The core serves metrics with the JDK's HTTP server (com.sun.net.httpserver, jdk.httpserver).
    p.put("org.osgi.framework.system.packages.extra",
        "sun.misc,com.sun.nio.file,com.sun.net.httpserver");
    // Without a terminal, Gogo's shell runs no interactive session and must not stop the
    // framework when its (empty) session ends; in the foreground, leaving the shell stops the node.
    p.put("gosh.args", shell ? "" : "--nointeractive --noshutdown");
    if (!shell) {
      p.put("gosh.home", home.resolve("etc/background-shell").toString());
    }
    p.put("felix.log.level", "1");
    // which FUSE front end this node mounts with: the other one's bundle skips its warm-up
    p.put(FRONTEND_PROPERTY, frontend);
    return p;
  }

  /** Installs every bundle of {@code bundleDir}, by symbolic name. */
  private Map<String, Bundle> installAll(Path bundleDir) throws IOException, BundleException {
    BundleContext ctx = framework.getBundleContext();
    Map<String, Bundle> installed = new LinkedHashMap<>();
    try (Stream<Path> jars = Files.list(bundleDir)) {
      for (Path jar : jars.filter(p -> p.toString().endsWith(".jar")).sorted().toList()) {
        Bundle b = ctx.installBundle(jar.toUri().toString());
        installed.put(b.getSymbolicName(), b);
      }
    }
    if (installed.isEmpty()) {
      throw new IOException("no bundles in " + bundleDir);
    }
    return installed;
  }

  /**
   * The bundles to start after {@link #FIRST}, in order: the shell bundle first (its session
   * listener must be in place before gogo.jline's shell, which starts with the Gogo runtime, runs
   * its profile — the first command line of the node's own shell — or the etcfs commands' words
   * would not complete there); then the other bundles that do not use etcd (Gogo, JLine); then
   * etcfs's plug-ins, whose components wait for the etcd client. Hazelcast's bundles only when
   * the backend is known to be Hazelcast; fragments are never started.
   */
  private static List<String> rest(Map<String, Bundle> bundles, String backend) {
    List<String> rest = new ArrayList<>();
    for (Bundle b : bundles.values()) {
      String name = b.getSymbolicName();
      if (!FIRST.contains(name) && b.getHeaders().get("Fragment-Host") == null
          && (!HAZELCAST.contains(name) || backend.equals(HAZELCAST_BACKEND))) {
        rest.add(name);
      }
    }
    rest.sort(Comparator.comparing((String n) -> !n.equals(SHELL_BUNDLE))
        .thenComparing(n -> n.startsWith("io.etcfs.")));
    return rest;
  }

  /** Starts the named bundles that are installed, in order, transiently. */
  private static void startAll(Map<String, Bundle> bundles, List<String> names)
      throws BundleException {
    for (String name : names) {
      Bundle b = bundles.get(name);
      if (b != null) {
        b.start(Bundle.START_TRANSIENT);
      }
    }
  }

  /**
   * Starts the bundles of lock backend {@code backend} that a start left stopped because the
   * configuration did not select it (today Hazelcast's): what a switch to that backend must do
   * before it changes the core's {@code lockService.target}.
   */
  public void startBackend(String backend) throws BundleException {
    if (!backend.equals(HAZELCAST_BACKEND)) {
      return;
    }
    Map<String, Bundle> bundles = new LinkedHashMap<>();
    for (Bundle b : framework.getBundleContext().getBundles()) {
      bundles.put(b.getSymbolicName(), b);
    }
    startAll(bundles, HAZELCAST);
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

package io.etcfs.core.internal;

import io.etcfs.core.fs.Switches;
import io.etcfs.spi.alloc.Allocator;
import io.etcfs.spi.lock.LockService;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.logging.Logger;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleException;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceReference;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * A switch's work that is about this node's framework (issue #15): the backends' bundles and
 * configurations, and the core's binding, which follows its own configuration's targets (a
 * dynamic, greedy reference: rebinding does not reactivate the core).
 *
 * <p>Which bundles and configuration make a backend is the launcher's {@code NodeConfigs} table
 * again, here as {@link #BACKENDS}; a configuration made here carries the node's names and what
 * {@code ETCFS_NODE_CONFIG} sets for that backend's PID.
 */
final class OsgiBinder implements Switches.Binder {
  private static final Logger LOG = Logger.getLogger(OsgiBinder.class.getName());
  static final String CORE_PID = "io.etcfs.core";
  /** A backend's activation may start a Hazelcast member: it waits for its peers. */
  private static final long READY_SECONDS = 90;

  /** One backend: its bundles, in start order, and its configuration's PID. */
  record Backend(List<String> bundles, String pid) {}

  static final Map<String, Map<String, Backend>> BACKENDS = Map.of(
      Switches.LOCK, Map.of(
          "etcd", new Backend(List.of("io.etcfs.lock-etcd"), "io.etcfs.lock.etcd"),
          "hazelcast", new Backend(List.of("com.hazelcast", "io.etcfs.lock-hazelcast"),
              "io.etcfs.lock.hazelcast")),
      Switches.ALLOC, Map.of(
          "arena", new Backend(List.of("io.etcfs.alloc-arena"), "io.etcfs.alloc.arena"),
          "shared", new Backend(List.of("io.etcfs.alloc-shared"), "io.etcfs.alloc.shared")));

  private final BundleContext context;
  private final String fsName;
  private final String nodeName;
  private final Supplier<LockService> lock;
  private final Supplier<Allocator> allocator;
  /** Services got to warm a prepared backend up, to be given back if it is not used. */
  private final Map<String, ServiceReference<?>> warmed =
      new java.util.concurrent.ConcurrentHashMap<>();

  OsgiBinder(BundleContext context, String fsName, String nodeName, Supplier<LockService> lock,
      Supplier<Allocator> allocator) {
    this.context = context;
    this.fsName = fsName;
    this.nodeName = nodeName;
    this.lock = lock;
    this.allocator = allocator;
  }

  @Override
  public List<String> available(String kind) {
    List<String> names = new ArrayList<>();
    for (Map.Entry<String, Backend> b : new java.util.TreeMap<>(BACKENDS.get(kind)).entrySet()) {
      if (b.getValue().bundles().stream().allMatch(n -> bundle(n) != null)) {
        names.add(b.getKey());
      }
    }
    return names;
  }

  @Override
  public void prepare(String kind, String name) throws Exception {
    Backend b = backend(kind, name);
    for (String n : b.bundles()) {
      Bundle bundle = bundle(n);
      if (bundle == null) {
        throw new IllegalStateException("bundle " + n + " is not installed on this node");
      }
      if (bundle.getState() != Bundle.ACTIVE) {
        try {
          bundle.start(Bundle.START_TRANSIENT);
        } catch (BundleException e) {
          throw new IllegalStateException("bundle " + n + " does not start: " + e.getMessage(),
              e);
        }
      }
    }
    Configuration c = cm().getConfiguration(b.pid(), "?");
    if (c.getProperties() == null) {
      Dictionary<String, Object> props = new Hashtable<>();
      settings(b.pid(), System.getenv(SETTINGS_ENV)).forEach(props::put);
      props.put("fsName", fsName);
      props.put("nodeName", nodeName);
      if (kind.equals(Switches.ALLOC)) {
        // Another allocator still allocates until the cutover: this one only shows it can
        // start, and becomes the one used in bind, after the cutover cleared its state.
        props.put(Allocator.STANDBY, Boolean.TRUE);
      }
      c.update(props);
    }
    boolean standby = kind.equals(Switches.ALLOC) && standby(c);
    ServiceReference<?> ref = await(kind, name, standby);
    if (kind.equals(Switches.ALLOC)) {
      List<String> areas = areas(ref);
      for (String area : areas) {
        if (!Allocator.isStateArea(area)) {
          throw new IllegalStateException("allocator " + name + " declares '" + area + "' as its"
              + " state, which a switch may not clear");
        }
      }
    }
  }

  /**
   * Waits until backend {@code name}'s service is active (in standby, or not), and keeps it in
   * use until it is switched to or let go.
   */
  private ServiceReference<?> await(String kind, String name, boolean standby) throws Exception {
    Class<?> type = kind.equals(Switches.LOCK) ? LockService.class : Allocator.class;
    String filter = filter(kind, name, standby);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(READY_SECONDS);
    while (true) {
      ServiceReference<?>[] refs = context.getServiceReferences(type.getName(), filter);
      if (refs != null && refs.length > 0) {
        // A delayed component activates on its first get: a Hazelcast member starts here, not
        // inside the core's rebind, where SCR could give up on it.
        if (context.getService(refs[0]) != null) {
          ServiceReference<?> before = warmed.put(kind + " " + name, refs[0]);
          if (before != null) {
            context.ungetService(before);
          }
          return refs[0];
        }
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(kind + " backend " + name + " did not become active"
            + " within " + READY_SECONDS + " s (see the node's log)");
      }
      Thread.sleep(50);
    }
  }

  /**
   * The services of backend {@code name}: an allocator in standby is told apart from the one
   * in use, so the core never binds a standby one.
   */
  static String filter(String kind, String name, boolean standby) {
    String backend = "(" + Allocator.BACKEND + "=" + name + ")";
    if (!kind.equals(Switches.ALLOC)) {
      return backend;
    }
    return standby ? "(&" + backend + "(" + Allocator.STANDBY + "=true))"
        : "(&" + backend + "(!(" + Allocator.STANDBY + "=true)))";
  }

  private static boolean standby(Configuration c) {
    Dictionary<String, Object> props = c.getProperties();
    Object v = props == null ? null : props.get(Allocator.STANDBY);
    return Boolean.TRUE.equals(v) || "true".equals(v);
  }

  /** The state areas a service declares ({@link Allocator#STATE}). */
  private static List<String> areas(ServiceReference<?> ref) {
    Object v = ref.getProperty(Allocator.STATE);
    if (v instanceof String[] a) {
      return List.of(a);
    }
    if (v instanceof String one) {
      return List.of(one);
    }
    return List.of();
  }

  @Override
  public List<String> stateAreas(String kind, String name) {
    ServiceReference<?> ref = warmed.get(kind + " " + name);
    if (ref == null) {
      throw new IllegalStateException(kind + " backend " + name + " is not prepared here");
    }
    return areas(ref);
  }

  /** The node's component settings, as the launcher hands them to the node's process. */
  static final String SETTINGS_ENV = "ETCFS_NODE_CONFIG";

  /**
   * The settings for {@code pid} in {@code env} ({@code PID.property=value,…}, checked by the
   * CLI before the node started): a backend configured by a switch gets what the operator set
   * for it, such as the Hazelcast member's address on a real machine.
   */
  static Map<String, String> settings(String pid, String env) {
    Map<String, String> found = new java.util.LinkedHashMap<>();
    if (env == null) {
      return found;
    }
    for (String item : env.split(",")) {
      int eq = item.indexOf('=');
      int dot = eq < 0 ? -1 : item.lastIndexOf('.', eq);
      if (dot > 0 && item.substring(0, dot).strip().equals(pid)) {
        found.put(item.substring(dot + 1, eq).strip(), item.substring(eq + 1).strip());
      }
    }
    return found;
  }

  @Override
  public void bind(String lockName, String allocName) throws Exception {
    Configuration core = cm().getConfiguration(CORE_PID, "?");
    Dictionary<String, Object> props = core.getProperties();
    if (props == null) {
      throw new IllegalStateException("the core has no configuration");
    }
    String lockTarget = filter(Switches.LOCK, lockName, false);
    String allocTarget = filter(Switches.ALLOC, allocName, false);
    if (!lockTarget.equals(props.get("lockService.target"))
        || !allocTarget.equals(props.get("allocator.target"))) {
      for (String kind : List.of(Switches.LOCK, Switches.ALLOC)) {
        prepare(kind, kind.equals(Switches.LOCK) ? lockName : allocName);
      }
      leaveStandby(allocName);
      props.put("lockService.target", lockTarget);
      props.put("allocator.target", allocTarget);
      core.update(props);
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(READY_SECONDS);
    while (!bound(lock.get(), lockName) || !boundAlloc(allocator.get(), allocName)) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("the core did not bind lock backend " + lockName
            + " and allocator " + allocName + " within " + READY_SECONDS + " s");
      }
      Thread.sleep(20);
    }
  }

  /**
   * The allocator switched to starts for use: its configuration without {@link
   * Allocator#STANDBY} makes SCR replace the standby instance with one that reads its state.
   */
  private void leaveStandby(String allocName) throws Exception {
    Configuration c = cm().getConfiguration(backend(Switches.ALLOC, allocName).pid(), "?");
    if (!standby(c)) {
      return;
    }
    ServiceReference<?> ref = warmed.remove(Switches.ALLOC + " " + allocName);
    if (ref != null) {
      context.ungetService(ref);
    }
    Dictionary<String, Object> props = c.getProperties();
    props.remove(Allocator.STANDBY);
    c.update(props);
    await(Switches.ALLOC, allocName, false);
  }

  @Override
  public void retireOthers(String lockName, String allocName) {
    retireKind(Switches.LOCK, lockName);
    retireKind(Switches.ALLOC, allocName);
  }

  @Override
  public void unprepare(String kind, String name) {
    String inUse = kind.equals(Switches.LOCK) ? nameOf(lock.get()) : nameOfAlloc(allocator.get());
    if (!name.equals(inUse)) {
      retire(kind, name);
    }
  }

  private void retireKind(String kind, String keep) {
    for (String name : BACKENDS.get(kind).keySet()) {
      if (!name.equals(keep)) {
        retire(kind, name);
      }
    }
  }

  /** Its configuration deleted, the backend's component deactivates: its sessions end. */
  private void retire(String kind, String name) {
    ServiceReference<?> ref = warmed.remove(kind + " " + name);
    if (ref != null) {
      context.ungetService(ref);
    }
    try {
      Configuration[] found = cm().listConfigurations("(service.pid="
          + backend(kind, name).pid() + ")");
      if (found != null) {
        for (Configuration c : found) {
          c.delete();
          LOG.info(kind + " backend " + name + " no longer used here: its configuration is"
              + " deleted");
        }
      }
    } catch (IOException | InvalidSyntaxException | RuntimeException e) {
      LOG.warning("cannot let " + kind + " backend " + name + " go: " + e.getMessage());
    }
  }

  private static boolean bound(LockService s, String name) {
    return s != null && s.backend().equals(name);
  }

  private static boolean boundAlloc(Allocator a, String name) {
    return a != null && a.backend().equals(name);
  }

  private static String nameOf(LockService s) {
    return s == null ? "" : s.backend();
  }

  private static String nameOfAlloc(Allocator a) {
    return a == null ? "" : a.backend();
  }

  private static Backend backend(String kind, String name) {
    Backend b = BACKENDS.getOrDefault(kind, Map.of()).get(name);
    if (b == null) {
      throw new IllegalArgumentException("no " + kind + " backend '" + name + "'");
    }
    return b;
  }

  private Bundle bundle(String symbolicName) {
    for (Bundle b : context.getBundles()) {
      if (symbolicName.equals(b.getSymbolicName())) {
        return b;
      }
    }
    return null;
  }

  private ConfigurationAdmin cm() {
    ServiceReference<ConfigurationAdmin> ref = context.getServiceReference(
        ConfigurationAdmin.class);
    ConfigurationAdmin cm = ref == null ? null : context.getService(ref);
    if (cm == null) {
      throw new IllegalStateException("Configuration Admin is not running");
    }
    return cm;
  }
}

package io.etcfs.launcher.node;

import java.util.Hashtable;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The Configuration Admin configurations of one node, by PID. The property names are the
 * components' metatype attribute names; docs/ARCHITECTURE.md lists them.
 */
public final class NodeConfigs {
  static final String EXEC_AGENT = "io.etcfs.fence.exec";
  static final String RESERVATION_AGENT = "io.etcfs.fence.reservation";
  /** The two FUSE front ends: exactly one is configured. */
  public static final String FUSE_HIGHLEVEL = "io.etcfs.fuse";
  public static final String FUSE_LOWLEVEL = "io.etcfs.fuse3";
  /** The metrics endpoint: configured only with {@code --metrics}. */
  public static final String METRICS = "io.etcfs.metrics";

  /**
   * PIDs configured only when the user selects that component: each one's component requires
   * its configuration, so without it the component simply does not exist, which is not a fault.
   */
  public static final Set<String> SELECTED_ONLY = Set.of(EXEC_AGENT, RESERVATION_AGENT,
      METRICS);

  /**
   * {@link #SELECTED_ONLY}, the lock backends, allocators and front end not chosen: only the chosen
   * ones are configured, and their components must be whole before the node is (a node is never
   * ready before its mount is). A lock backend not chosen is not configured, so it neither
   * starts a member nor opens a session, and {@code locks} reports only the one in use.
   *
   * @param frontend {@link NodeSpec#LOWLEVEL} or {@link NodeSpec#HIGHLEVEL}; null is the default
   */
  public static Set<String> selectedOnly(String frontend) {
    return Set.of(EXEC_AGENT, RESERVATION_AGENT, METRICS, LOCK_ETCD, LOCK_HAZELCAST, ALLOC_ARENA,
        ALLOC_SHARED,
        NodeSpec.HIGHLEVEL.equals(frontend) ? FUSE_LOWLEVEL : FUSE_HIGHLEVEL);
  }

  private NodeConfigs() {}

  public static final String ETCD = "io.etcfs.etcd";
  /** The PIDs of the lock backends and allocators, one of each configured on a node. */
  static final Set<String> BACKEND_PIDS = Set.of("io.etcfs.lock.etcd",
      "io.etcfs.lock.hazelcast", "io.etcfs.alloc.arena", "io.etcfs.alloc.shared");
  public static final String LOCK_ETCD = "io.etcfs.lock.etcd";
  public static final String LOCK_HAZELCAST = "io.etcfs.lock.hazelcast";
  public static final String ALLOC_ARENA = "io.etcfs.alloc.arena";
  public static final String ALLOC_SHARED = "io.etcfs.alloc.shared";

  /**
   * Every configuration of the node. The lock backend and the allocator must be resolved,
   * except that a spec without them may ask only for the etcd client's configuration ({@link
   * #ETCD}).
   */
  public static Map<String, Hashtable<String, Object>> of(NodeSpec s) {
    Map<String, Hashtable<String, Object>> c = new LinkedHashMap<>();
    EtcdConnection e = s.etcd();
    c.put(ETCD, props(
        "endpoints", e.endpoints(), "caFile", e.caFile(), "certFile", e.certFile(),
        "keyFile", e.keyFile(), "user", e.user(), ".password", e.password()));
    FenceSpec f = s.fence();
    c.put("io.etcfs.fencing", props(
        "fsName", s.fsName(), "nodeName", s.nodeName(), "leaseTtlSeconds", s.leaseTtlSeconds(),
        "mountpoint", s.mountpoint().toString(), "device", s.device().toString(),
        "fenceAgent.target", "(etcfs.fence.agent=" + f.agent() + ")",
        "fenceTimeoutSeconds", f.timeoutSeconds()));
    if (s.metrics().enabled()) {
      // recorded in the membership key, where etcfs top finds it
      c.get("io.etcfs.fencing").put("metrics", s.metrics().address());
    }
    if (f.agent().equals("exec")) {
      c.put(EXEC_AGENT, props("fsName", s.fsName(), ".command", f.command()));
    }
    if (f.agent().equals("reservation")) {
      c.put(RESERVATION_AGENT, props("device", s.device().toString()));
    }
    c.put("io.etcfs.core", props(
        "fsName", s.fsName(), "nodeName", s.nodeName(), "device", s.device().toString(),
        "mountpoint", s.mountpoint().toString(),
        "lockService.target", "(etcfs.backend=" + s.lockBackend() + ")",
        "allocator.target", "(etcfs.backend=" + s.allocBackend() + ")"));
    // Only the chosen lock backend and allocator; both while unresolved (a first pass whose
    // only use is the etcd client's configuration, so that settings for either are accepted).
    for (String pid : chosen(s.lockBackend(), Map.of("etcd", LOCK_ETCD,
        "hazelcast", LOCK_HAZELCAST))) {
      c.put(pid, props("fsName", s.fsName(), "nodeName", s.nodeName()));
    }
    for (String pid : chosen(s.allocBackend(), Map.of("arena", ALLOC_ARENA,
        "shared", ALLOC_SHARED))) {
      c.put(pid, props("fsName", s.fsName(), "nodeName", s.nodeName()));
    }
    if (s.metrics().enabled()) {
      // before the front end's, so a required endpoint that cannot bind fails the start before
      // the mount; "required" only when asked for, so that ETCFS_NODE_CONFIG may set it too
      Hashtable<String, Object> m = props("address", s.metrics().address());
      if (s.metrics().required()) {
        m.put("required", true);
      }
      c.put(METRICS, m);
    }
    c.put(s.frontend().equals(NodeSpec.HIGHLEVEL) ? FUSE_HIGHLEVEL : FUSE_LOWLEVEL,
        props("fsName", s.fsName(), "mountpoint", s.mountpoint().toString()));
    return c;
  }

  /** The PID of backend {@code name} among {@code pids}; every one if {@code name} is empty. */
  private static java.util.Collection<String> chosen(String name, Map<String, String> pids) {
    if (name.isEmpty()) {
      return new java.util.TreeSet<>(pids.values());
    }
    String pid = pids.get(name);
    if (pid == null) {
      throw new IllegalArgumentException("unknown backend '" + name + "'");
    }
    return List.of(pid);
  }

  /** The environment variable with a node's component settings; see {@link #withSettings}. */
  public static final String SETTINGS_ENV = "ETCFS_NODE_CONFIG";

  /**
   * {@code configs} with the component settings {@code settings} adds: a comma-separated list
   * of {@code PID.property=value} (for example {@code
   * io.etcfs.lock.etcd.idleReleaseSeconds=60}), where PID is one of the node's configurations
   * and the property one of its component's metatype attributes (docs/ARCHITECTURE.md lists
   * them; Declarative Services converts the string to the attribute's type). What etcfs sets
   * itself from the command line (names, paths, endpoints, targets) cannot be set this way.
   *
   * @throws IllegalArgumentException naming the setting that is wrong, in one line
   */
  public static Map<String, Hashtable<String, Object>> withSettings(
      Map<String, Hashtable<String, Object>> configs, String settings) {
    if (settings == null || settings.isBlank()) {
      return configs;
    }
    for (String item : settings.split(",")) {
      String setting = item.strip();
      if (setting.isEmpty()) {
        continue;
      }
      int eq = setting.indexOf('=');
      int dot = eq < 0 ? -1 : setting.lastIndexOf('.', eq);
      if (eq < 0 || dot < 0) {
        throw new IllegalArgumentException(SETTINGS_ENV + ": '" + setting
            + "' is not PID.property=value");
      }
      String pid = setting.substring(0, dot);
      String key = setting.substring(dot + 1, eq).strip();
      String value = setting.substring(eq + 1).strip();
      Hashtable<String, Object> config = configs.get(pid);
      if (config == null && BACKEND_PIDS.contains(pid)) {
        continue; // a backend this node does not run now: the node applies it if a live switch
                  // starts it (the core's OsgiBinder reads the same variable)
      }
      if (config == null) {
        throw new IllegalArgumentException(SETTINGS_ENV + ": no component '" + pid
            + "' on this node (configured: " + String.join(", ", new java.util.TreeSet<>(
                configs.keySet())) + ")");
      }
      if (key.isEmpty() || !key.matches("[A-Za-z][A-Za-z0-9]*")) {
        throw new IllegalArgumentException(SETTINGS_ENV + ": '" + key + "' in '" + setting
            + "' is not a property name");
      }
      if (config.containsKey(key) || config.containsKey("." + key)) {
        throw new IllegalArgumentException(SETTINGS_ENV + ": " + pid + "." + key
            + " is set by etcfs from its command line; use the option instead");
      }
      config.put(key, value);
    }
    return configs;
  }

  private static Hashtable<String, Object> props(Object... kv) {
    Hashtable<String, Object> t = new Hashtable<>();
    for (int i = 0; i < kv.length; i += 2) {
      t.put((String) kv[i], kv[i + 1]);
    }
    return t;
  }
}

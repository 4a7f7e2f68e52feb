package io.etcfs.launcher.node;

import io.etcfs.launcher.UserError;
import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Properties;

/**
 * Everything one node runtime needs to start, written by {@code etcfs mount} to
 * {@code <state dir>/<node>.properties} (owner-only: it may hold the etcd password) and read by
 * {@link NodeMain} in the node's own JVM.
 *
 * @param fsName the filesystem's name
 * @param nodeName this node's name
 * @param device the shared device
 * @param mountpoint where the filesystem is mounted
 * @param stateDir where the pid file, control socket and Felix cache live
 * @param logFile the node's log
 * @param etcd the etcd connection settings
 * @param leaseTtlSeconds the membership lease TTL
 * @param lockBackend the lock backend's name, or empty: the one the filesystem record names
 *     (the node reads it once its etcd client is up)
 * @param fence the fence agent recovery runs against a dead node
 * @param frontend the FUSE front end: {@value #LOWLEVEL} (libfuse 3's low-level API) or
 *     {@value #HIGHLEVEL} (libfuse 2 through jnr-fuse)
 * @param allocBackend the allocator's name, or empty: the one the filesystem record names (the
 *     node reads it once its etcd client is up)
 * @param metrics where the node serves Prometheus metrics, if anywhere ({@code --metrics})
 */
public record NodeSpec(
    String fsName,
    String nodeName,
    Path device,
    Path mountpoint,
    Path stateDir,
    Path logFile,
    EtcdConnection etcd,
    int leaseTtlSeconds,
    String lockBackend,
    FenceSpec fence,
    String frontend,
    String allocBackend,
    Metrics metrics) {
  public static final String LOWLEVEL = "lowlevel";
  public static final String HIGHLEVEL = "highlevel";

  /**
   * A metrics endpoint: {@code address} HOST:PORT, empty for none; {@code required}: a node
   * that cannot bind it refuses to start (else it starts without metrics and logs one line).
   */
  public record Metrics(String address, boolean required) {
    public static final Metrics NONE = new Metrics("", false);

    public boolean enabled() {
      return !address.isEmpty();
    }

    /**
     * With {@code required}, checks before anything starts that the address can be bound, so
     * that a node that must refuse does so with one line before it joins or mounts (the
     * endpoint's own failure to bind stays the guard against a port taken meanwhile).
     *
     * @throws UserError naming the address and why
     */
    public void checkBindable() {
      if (!enabled() || !required) {
        return;
      }
      int colon = address.lastIndexOf(':');
      String host = address.substring(0, colon).replaceAll("^\\[|\\]$", "");
      try (java.net.ServerSocket s = new java.net.ServerSocket()) {
        s.bind(new java.net.InetSocketAddress(host, Integer.parseInt(address.substring(colon + 1))));
      } catch (IOException | RuntimeException e) {
        throw new UserError("metrics address " + address + " cannot be bound: " + e.getMessage());
      }
    }
  }

  /** A spec without a metrics endpoint. */
  public NodeSpec(String fsName, String nodeName, Path device, Path mountpoint, Path stateDir,
      Path logFile, EtcdConnection etcd, int leaseTtlSeconds, String lockBackend,
      FenceSpec fence, String frontend, String allocBackend) {
    this(fsName, nodeName, device, mountpoint, stateDir, logFile, etcd, leaseTtlSeconds,
        lockBackend, fence, frontend, allocBackend, Metrics.NONE);
  }

  /** A spec whose allocator is the one the filesystem record names. */
  public NodeSpec(String fsName, String nodeName, Path device, Path mountpoint, Path stateDir,
      Path logFile, EtcdConnection etcd, int leaseTtlSeconds, String lockBackend,
      FenceSpec fence, String frontend) {
    this(fsName, nodeName, device, mountpoint, stateDir, logFile, etcd, leaseTtlSeconds,
        lockBackend, fence, frontend, "");
  }

  public NodeSpec(String fsName, String nodeName, Path device, Path mountpoint, Path stateDir,
      Path logFile, EtcdConnection etcd, int leaseTtlSeconds, String lockBackend,
      FenceSpec fence) {
    this(fsName, nodeName, device, mountpoint, stateDir, logFile, etcd, leaseTtlSeconds,
        lockBackend, fence, LOWLEVEL);
  }

  /** A node without a fence agent: recovery relies on the lease, grace and device heartbeat. */
  public NodeSpec(String fsName, String nodeName, Path device, Path mountpoint, Path stateDir,
      Path logFile, EtcdConnection etcd, int leaseTtlSeconds, String lockBackend) {
    this(fsName, nodeName, device, mountpoint, stateDir, logFile, etcd, leaseTtlSeconds,
        lockBackend, FenceSpec.NONE);
  }

  /** This spec with the lock backend resolved. */
  public NodeSpec withLockBackend(String backend) {
    return new NodeSpec(fsName, nodeName, device, mountpoint, stateDir, logFile, etcd,
        leaseTtlSeconds, backend, fence, frontend, allocBackend, metrics);
  }

  /** This spec with the allocator resolved. */
  public NodeSpec withAllocBackend(String backend) {
    return new NodeSpec(fsName, nodeName, device, mountpoint, stateDir, logFile, etcd,
        leaseTtlSeconds, lockBackend, fence, frontend, backend, metrics);
  }

  /** This spec with another front end. */
  public NodeSpec withFrontend(String name) {
    return new NodeSpec(fsName, nodeName, device, mountpoint, stateDir, logFile, etcd,
        leaseTtlSeconds, lockBackend, fence, name, allocBackend, metrics);
  }

  /** This spec with a metrics endpoint. */
  public NodeSpec withMetrics(Metrics m) {
    return new NodeSpec(fsName, nodeName, device, mountpoint, stateDir, logFile, etcd,
        leaseTtlSeconds, lockBackend, fence, frontend, allocBackend, m);
  }

  public Path pidFile() {
    return stateDir.resolve(nodeName + ".pid");
  }

  public Path socket() {
    return stateDir.resolve(nodeName + ".sock");
  }

  public Path specFile() {
    return stateDir.resolve(nodeName + ".properties");
  }

  public Path cacheDir() {
    return stateDir.resolve(nodeName + ".cache");
  }

  public void write() throws IOException {
    Properties p = new Properties();
    p.setProperty("fsName", fsName);
    p.setProperty("nodeName", nodeName);
    p.setProperty("device", device.toString());
    p.setProperty("mountpoint", mountpoint.toString());
    p.setProperty("stateDir", stateDir.toString());
    p.setProperty("logFile", logFile.toString());
    p.setProperty("leaseTtlSeconds", Integer.toString(leaseTtlSeconds));
    p.setProperty("lockBackend", lockBackend);
    p.setProperty("frontend", frontend);
    p.setProperty("allocBackend", allocBackend);
    p.setProperty("metrics", metrics.address());
    p.setProperty("metricsRequired", Boolean.toString(metrics.required()));
    etcd.store(p);
    fence.store(p);
    Path file = specFile();
    Files.deleteIfExists(file);
    Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    try (Writer w = Files.newBufferedWriter(file)) {
      p.store(w, "etcfs node " + nodeName);
    }
  }

  public static NodeSpec read(Path file) {
    Properties p = new Properties();
    try (Reader r = Files.newBufferedReader(file)) {
      p.load(r);
    } catch (IOException e) {
      throw new UserError("cannot read node spec " + file + ": " + e.getMessage(), e);
    }
    return new NodeSpec(
        req(p, "fsName"),
        req(p, "nodeName"),
        Path.of(req(p, "device")),
        Path.of(req(p, "mountpoint")),
        Path.of(req(p, "stateDir")),
        Path.of(req(p, "logFile")),
        EtcdConnection.load(p),
        Integer.parseInt(req(p, "leaseTtlSeconds")),
        req(p, "lockBackend"),
        fence(p, file),
        p.getProperty("frontend", LOWLEVEL),
        p.getProperty("allocBackend", ""),
        new Metrics(p.getProperty("metrics", ""),
            Boolean.parseBoolean(p.getProperty("metricsRequired", "false"))));
  }

  private static FenceSpec fence(Properties p, Path file) {
    try {
      return FenceSpec.load(p);
    } catch (IllegalArgumentException e) {
      throw new UserError("node spec " + file + ": " + e.getMessage(), e);
    }
  }

  private static String req(Properties p, String key) {
    String v = p.getProperty(key);
    if (v == null) {
      throw new UserError("node spec lacks '" + key + "'");
    }
    return v;
  }
}

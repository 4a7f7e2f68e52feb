package io.etcfs.core.internal;

import io.etcfs.core.device.FencedDevice;
import io.etcfs.core.device.FileBlockDevice;
import io.etcfs.core.format.FilesystemCheck;
import io.etcfs.core.format.FormatException;
import io.etcfs.core.fs.EtcFs;
import io.etcfs.core.fs.Switches;
import io.etcfs.spi.alloc.Allocator;
import io.etcfs.spi.fencing.DeadNode;
import io.etcfs.spi.fencing.Membership;
import io.etcfs.spi.fencing.RecoveryParticipant;
import io.etcfs.spi.fs.FsRecord;
import io.etcfs.spi.lease.LeaseReport;
import io.etcfs.spi.lock.LockService;
import io.etcfs.spi.metrics.MetricSource;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.shell.Completion;
import io.etcfs.spi.shell.CompletionSource;
import io.etcfs.spi.shell.InodePaths;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.Vfs;
import io.etcfs.support.shell.Args;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Logger;
import org.apache.felix.service.command.Descriptor;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.metatype.annotations.Designate;

/**
 * The filesystem on this node. It binds the lock and allocator backends its configuration names
 * ({@code lockService.target}, {@code allocator.target}); both references are dynamic and greedy,
 * so a configuration change or a higher-ranked backend rebinds them in the running framework
 * without reactivating the core. Once the device and the etcd record are checked to belong to one
 * filesystem, the core opens the device and registers the filesystem engine ({@link EtcFs}) as
 * the {@link Vfs} service the front ends use, and {@link InodePaths} for the shell.
 */
@Component(
    configurationPid = "io.etcfs.core",
    configurationPolicy = ConfigurationPolicy.REQUIRE,
    immediate = true,
    service = FileSystemCore.class,
    property = {
      "osgi.command.scope=etcfs",
      "osgi.command.function=lock",
      "osgi.command.function=alloc",
      "osgi.command.function=inode",
      "osgi.command.function=extents",
      "osgi.command.function=stats",
      "osgi.command.function=switches",
      Completion.PROPERTY + "=lock backend|switch -h",
      Completion.PROPERTY + "=alloc backend|switch -h",
      Completion.PROPERTY + "=switches -h",
      Completion.PROPERTY + "=inode @path|@inode --json -h",
      Completion.PROPERTY + "=extents @path|@inode --json -h",
      Completion.PROPERTY + "=stats --json -h"
    })
@Designate(ocd = CoreConfig.class)
public final class FileSystemCore {
  private static final Logger LOG = Logger.getLogger(FileSystemCore.class.getName());

  private final AtomicReference<LockService> lock = new AtomicReference<>();
  private final AtomicReference<Allocator> allocator = new AtomicReference<>();
  private final FileBlockDevice device;
  private final EtcFs engine;
  private final ServiceRegistration<Vfs> registration;
  private final ServiceRegistration<RecoveryParticipant> recovery;
  private final CoreCommands commands;
  private final ServiceRegistration<LeaseReport> leaseReport;
  private final ServiceRegistration<CompletionSource> pathCompletion;
  private final ServiceRegistration<CompletionSource> inodeCompletion;
  private final ServiceRegistration<InodePaths> inodePaths;
  private final ServiceRegistration<FenceLookup> fences;
  private final ServiceRegistration<MetricSource> metrics;
  private final Switches switches;

  /**
   * Checks the device against the record, opens it and registers the engine as the {@link Vfs}
   * service. The engine asks for the allocator on every use, so the dynamic rebinding below
   * swaps the backend under a running filesystem.
   */
  @Activate
  public FileSystemCore(
      CoreConfig config, @Reference MetaStore store, @Reference Membership membership,
      BundleContext context)
      throws IOException, FormatException {
    if (config.lockWaitSeconds() <= 0) {
      throw new IllegalArgumentException("lockWaitSeconds must be at least 1, not "
          + config.lockWaitSeconds());
    }
    FsRecord record = FilesystemCheck.verify(store, config.fsName(), Path.of(config.device()));
    this.device = FileBlockDevice.open(Path.of(config.device()));
    try {
      this.engine = new EtcFs(store, config.fsName(), membership, allocator::get, lock::get,
          new FencedDevice(device, membership),
          record.blockSize(), EtcFs.DEFAULT_BUFFER_BYTES,
          Duration.ofSeconds(config.lockWaitSeconds()));
    } catch (RuntimeException e) {
      device.close();
      throw e;
    }
    this.commands = new CoreCommands(engine, config.mountpoint(),
        record.blockSize());
    Dictionary<String, Object> props = new Hashtable<>();
    props.put("etcfs.fsName", config.fsName());
    this.registration = context.registerService(Vfs.class, engine, props);
    this.recovery = context.registerService(RecoveryParticipant.class, new RecoveryParticipant() {
      @Override
      public String name() {
        return RecoveryParticipant.FILESYSTEM;
      }

      @Override
      public String recover(DeadNode dead) throws Exception {
        return engine.recover(dead);
      }
    }, props);
    this.leaseReport = context.registerService(LeaseReport.class, engine::leases, props);
    CoreCompletions completions = new CoreCompletions(engine, config.mountpoint());
    this.pathCompletion = context.registerService(CompletionSource.class, completions::paths,
        kind(props, Completion.PATH));
    this.inodeCompletion = context.registerService(CompletionSource.class,
        completions::inodes, kind(props, Completion.INODE));
    // for the lock table's PATH column: registered with the filesystem, gone with it
    this.inodePaths = context.registerService(InodePaths.class, engine::pathOf, props);
    // and for its STATE column: whether a holder elsewhere declared itself clean
    this.fences = context.registerService(FenceLookup.class, engine::fenceOf, props);
    this.metrics = context.registerService(MetricSource.class, new CoreMetrics(engine,
        config.fsName(), membership.nodeName(), lock::get, allocator::get), props);
    // this node's part in live switches of lock backend or allocator (issue #15)
    this.switches = new Switches(store, config.fsName(), membership, engine,
        new OsgiBinder(context, config.fsName(), membership.nodeName(), lock::get,
            allocator::get)).start();
    LOG.info(
        "filesystem '" + config.fsName() + "' (" + record.uuid() + ") on "
            + config.device() + (device.direct() ? " (O_DIRECT)" : "") + " as node " + membership.nodeName() + " generation "
            + membership.generation());
  }

  @Deactivate
  void deactivate() {
    switches.close();
    for (ServiceRegistration<?> r : java.util.List.of(metrics, inodeCompletion, pathCompletion,
        inodePaths, fences, leaseReport, recovery, registration)) {
      try {
        r.unregister();
      } catch (IllegalStateException e) {
        // already gone with the bundle
      }
    }
    engine.close();
    try {
      device.close();
    } catch (IOException e) {
      LOG.warning("closing device: " + e.getMessage());
    }
  }

  private static Dictionary<String, Object> kind(Dictionary<String, Object> props, String kind) {
    Dictionary<String, Object> p = new Hashtable<>();
    p.put("etcfs.fsName", props.get("etcfs.fsName"));
    p.put(CompletionSource.KIND, kind);
    return p;
  }

  @Modified
  void modified(CoreConfig config) {
    LOG.info("lock backend " + config.lockService_target() + ", allocator " + config.allocator_target());
  }

  @Reference(
      name = "lockService",
      policy = ReferencePolicy.DYNAMIC,
      policyOption = ReferencePolicyOption.GREEDY)
  void bindLockService(LockService service) {
    lock.set(service);
    LOG.info("lock backend bound: " + service.backend());
  }

  /** The new service is bound before the old one is unbound, so only clear our own. */
  void unbindLockService(LockService service) {
    lock.compareAndSet(service, null);
  }

  @Reference(
      name = "allocator",
      policy = ReferencePolicy.DYNAMIC,
      policyOption = ReferencePolicyOption.GREEDY)
  void bindAllocator(Allocator service) {
    allocator.set(service);
    LOG.info("allocator bound: " + service.backend());
  }

  void unbindAllocator(Allocator service) {
    allocator.compareAndSet(service, null);
  }

  /** How long {@code lock switch} waits for the whole cluster to have switched. */
  private static final Duration SWITCH_WAIT = Switches.DEADLINE.plusSeconds(60);

  /**
   * Gogo: {@code lock backend} prints the lock backend this node uses; {@code lock switch NAME}
   * switches the whole cluster to another one, live (issue #15).
   */
  @Descriptor("lock backend: the inode-lock backend in use; lock switch NAME: switch the cluster")
  public String lock(String... args) throws InterruptedException {
    Args a = Args.parse("lock", "lock backend | lock switch NAME", args, 1, 2);
    if (a.help()) {
      return a.usage() + "\nShows the inode-lock backend this node uses (lock backend), or"
          + " switches every node of the mounted cluster to another (lock switch NAME): each"
          + " node stops taking locks, lets go of what it holds, and resumes on NAME; processes"
          + " see a pause.";
    }
    List<String> words = a.operands();
    if (words.get(0).equals("backend") && words.size() == 1) {
      return backendName(lock.get());
    }
    if (words.get(0).equals("switch") && words.size() == 2) {
      return switches.request(Switches.LOCK, words.get(1), SWITCH_WAIT);
    }
    throw new IllegalArgumentException("lock: unknown action '" + String.join(" ", words)
        + "' (" + a.usage() + ")");
  }

  /** Gogo: {@code switches}: the cluster's switches of lock backend and allocator, oldest first. */
  @Descriptor("the history of live switches of lock backend and allocator, with their pauses")
  public String switches(String... args) {
    Args a = Args.parse("switches", "switches", args, 0, 0);
    if (a.help()) {
      return a.usage() + "\nOne line per switch: epoch, kind, from -> to, when, who asked,"
          + " the outcome, and the pause.";
    }
    List<String> lines = switches.history();
    return lines.isEmpty() ? "no switch yet" : String.join("\n", lines);
  }

  /** Gogo: {@code inode PATH|INO [--json]}: an inode's attributes. */
  @Descriptor("an inode's attributes, by path under the mount, path from the root, or number")
  public String inode(String... args) throws FsException {
    Args a = Args.parse("inode", "inode PATH|INO [--json]", args, 1, 1, "--json");
    return a.help() ? a.usage() : commands.inode(a.operands().get(0), a.has("--json"));
  }

  /** Gogo: {@code extents PATH|INO [--json]}: a file's extent map with device offsets. */
  @Descriptor("a file's extent map: file block, device block, length, device offset")
  public String extents(String... args) throws FsException {
    Args a = Args.parse("extents", "extents PATH|INO [--json]", args, 1, 1, "--json");
    return a.help() ? a.usage() : commands.extents(a.operands().get(0), a.has("--json"));
  }

  /** Gogo: {@code stats [--json]}: operation counts and latencies, etcd, cache, device. */
  @Descriptor("this node's operation counts and latencies, etcd round trips, cache, device")
  public String stats(String... args) {
    Args a = Args.parse("stats", "stats [--json]", args, 0, 0, "--json");
    return a.help() ? a.usage() : commands.stats(a.has("--json"));
  }

  /**
   * Gogo: {@code alloc backend} prints the allocator this node uses; {@code alloc switch NAME}
   * switches the whole cluster to another one, live (issue #15).
   */
  @Descriptor("alloc backend: the block allocator in use; alloc switch NAME: switch the cluster")
  public String alloc(String... args) throws InterruptedException {
    Args a = Args.parse("alloc", "alloc backend | alloc switch NAME", args, 1, 2);
    if (a.help()) {
      return a.usage() + "\nShows the block allocator this node uses (alloc backend), or"
          + " switches every node of the mounted cluster to another (alloc switch NAME): each"
          + " node commits what it buffered and stops writing; NAME starts from the block"
          + " ownership records; processes see a pause.";
    }
    List<String> words = a.operands();
    if (words.get(0).equals("backend") && words.size() == 1) {
      return allocName(allocator.get());
    }
    if (words.get(0).equals("switch") && words.size() == 2) {
      return switches.request(Switches.ALLOC, words.get(1), SWITCH_WAIT);
    }
    throw new IllegalArgumentException("alloc: unknown action '" + String.join(" ", words)
        + "' (" + a.usage() + ")");
  }

  private static String backendName(LockService s) {
    return s == null ? "(none bound)" : s.backend();
  }

  private static String allocName(Allocator a) {
    return a == null ? "(none bound)" : a.backend();
  }
}

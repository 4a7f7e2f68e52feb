package io.etcfs.fuse3.internal;

import io.etcfs.fuse.common.Components;
import io.etcfs.spi.vfs.Vfs;
import java.nio.file.Path;
import java.time.Duration;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * The low-level FUSE front end: mounts the {@link Vfs} through libfuse 3's low-level API while
 * active. Exists only when configured (the node configures this one or the libfuse 2 front end,
 * never both). A mount that cannot be made fails the activation with one line.
 */
@Component(
    service = {},
    immediate = true,
    configurationPid = Fuse3Frontend.PID,
    configurationPolicy = ConfigurationPolicy.REQUIRE)
@Designate(ocd = Fuse3Frontend.Config.class)
public final class Fuse3Frontend {
  static final String PID = "io.etcfs.fuse3";

  @ObjectClassDefinition(
      name = "etcfs FUSE front end (low-level)",
      description = "Mounts the filesystem through libfuse 3's low-level API.")
  @interface Config {
    @AttributeDefinition(description = "The filesystem's name, shown as the etcfs:<name> source.")
    String fsName();

    @AttributeDefinition(description = "The directory to mount on (must exist and be empty).")
    String mountpoint();

    @AttributeDefinition(description = "Keep file data in the kernel's page cache while this "
        + "node holds the inode's lock; false opens every file with direct_io.")
    boolean pageCache() default true;

    // The timeouts only bound an invalidation the kernel was not sent: every change is told as
    // it happens (docs/ARCHITECTURE.md, "Kernel caches"), and since the metadata watch resumes
    // gap-free the one left is a restart after etcd compacted the history it needed.
    @AttributeDefinition(description = "Seconds the kernel may keep a file's attributes while "
        + "this node holds its lock, or nobody writes it elsewhere (they are dropped before the"
        + " lock goes, or as a writer elsewhere comes).")
    double attrTimeoutSeconds() default 60;

    @AttributeDefinition(description = "Seconds the kernel may keep a directory's attributes "
        + "(dropped when the metadata watch shows another node's change).")
    double dirAttrTimeoutSeconds() default 60;

    @AttributeDefinition(description = "Seconds the kernel may keep a name (dropped when the "
        + "metadata watch shows another node's change).")
    double entryTimeoutSeconds() default 60;

    @AttributeDefinition(description = "Seconds the kernel may keep an absent name (likewise).")
    double negativeTimeoutSeconds() default 60;

    @AttributeDefinition(description = "List directories with attributes (readdirplus).")
    boolean readdirplus() default true;

    @AttributeDefinition(description = "The kernel's read-ahead window for this mount, in KiB "
        + "(with the page cache only; 0 leaves the kernel's 128). Needs root to set.")
    int readAheadKib() default 1024;

    @AttributeDefinition(description = "Threads reading the FUSE device and running the callbacks.")
    int maxThreads() default 16;

    @AttributeDefinition(description = "How long an unmount may take before giving up.")
    long unmountTimeoutMs() default 10_000;
  }

  private final Fuse3Session session;

  @Activate
  public Fuse3Frontend(Config config, @Reference(name = "vfs") Vfs vfs) {
    CacheSettings cache = new CacheSettings(config.entryTimeoutSeconds(),
        config.negativeTimeoutSeconds(), config.attrTimeoutSeconds(),
        config.dirAttrTimeoutSeconds(), config.pageCache(), config.readdirplus());
    Fuse3Session.Options options = new Fuse3Session.Options(required("fsName", config.fsName()),
        Path.of(required("mountpoint", config.mountpoint())), cache,
        Math.max(2, config.maxThreads()), Duration.ofMillis(config.unmountTimeoutMs()),
        config.readAheadKib());
    this.session = Components.withLoaderOf(Fuse3Frontend.class, () -> {
      Libfuse3 lib = Libfuse3Probe.load();
      return Fuse3Session.mount(lib, vfs, options);
    });
  }

  @Deactivate
  void deactivate() {
    session.close();
  }

  private static String required(String name, String value) {
    return Components.required(PID, name, value);
  }
}

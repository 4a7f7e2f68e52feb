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

    @AttributeDefinition(description = "Bypass the kernel page cache for file data (direct_io).")
    boolean directIo() default true;

    @AttributeDefinition(description = "Seconds the kernel may cache attributes.")
    double attrTimeoutSeconds() default 0;

    @AttributeDefinition(description = "Seconds the kernel may cache names.")
    double entryTimeoutSeconds() default 0;

    @AttributeDefinition(description = "Seconds the kernel may cache an absent name.")
    double negativeTimeoutSeconds() default 0;

    @AttributeDefinition(description = "List directories with attributes (readdirplus).")
    boolean readdirplus() default false;

    @AttributeDefinition(description = "The most threads libfuse's loop may run.")
    int maxThreads() default 16;

    @AttributeDefinition(description = "How long an unmount may take before giving up.")
    long unmountTimeoutMs() default 10_000;
  }

  private final Fuse3Session session;

  @Activate
  public Fuse3Frontend(Config config, @Reference(name = "vfs") Vfs vfs) {
    CacheSettings cache = new CacheSettings(config.entryTimeoutSeconds(),
        config.attrTimeoutSeconds(), config.negativeTimeoutSeconds(), config.directIo(),
        config.readdirplus());
    Fuse3Session.Options options = new Fuse3Session.Options(required("fsName", config.fsName()),
        Path.of(required("mountpoint", config.mountpoint())), cache,
        Math.max(2, config.maxThreads()), Duration.ofMillis(config.unmountTimeoutMs()));
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

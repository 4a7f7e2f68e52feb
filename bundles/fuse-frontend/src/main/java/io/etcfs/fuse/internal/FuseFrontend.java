package io.etcfs.fuse.internal;

import io.etcfs.fuse.common.Components;
import io.etcfs.spi.vfs.Vfs;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Supplier;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * The FUSE front end: mounts the {@link Vfs} at the configured mountpoint while active. A mount
 * that cannot be made fails the activation with one line; deactivation unmounts within
 * {@code unmountTimeoutMs}.
 */
@Component(
    service = {},
    immediate = true,
    configurationPid = FuseFrontend.PID,
    configurationPolicy = ConfigurationPolicy.REQUIRE)
@Designate(ocd = FuseFrontend.Config.class)
public final class FuseFrontend {
  static final String PID = "io.etcfs.fuse";

  @ObjectClassDefinition(
      name = "etcfs FUSE front end",
      description = "Mounts the filesystem through libfuse 2.")
  @interface Config {
    @AttributeDefinition(description = "The filesystem's name, shown as the etcfs:<name> source.")
    String fsName();

    @AttributeDefinition(description = "The directory to mount on (must exist and be empty).")
    String mountpoint();

    @AttributeDefinition(description = "Bypass the kernel page cache for file data (direct_io): "
        + "what makes a read see another node's write.")
    boolean directIo() default true;

    @AttributeDefinition(description = "Seconds the kernel may cache attributes.")
    double attrTimeoutSeconds() default 0;

    @AttributeDefinition(description = "Seconds the kernel may cache names (and absent names).")
    double entryTimeoutSeconds() default 0;

    @AttributeDefinition(description = "One libfuse thread instead of its thread pool.")
    boolean singleThreaded() default false;

    @AttributeDefinition(description = "Hand the Vfs libfuse's own buffers (no copy).")
    boolean zeroCopy() default true;

    @AttributeDefinition(description = "How long the mount may take to appear.")
    long mountTimeoutMs() default 10_000;

    @AttributeDefinition(description = "How long an unmount may take before giving up.")
    long unmountTimeoutMs() default 10_000;
  }

  private final FuseMount mount;

  @Activate
  public FuseFrontend(Config config, @Reference(name = "vfs") Vfs vfs) {
    MountOptions options = new MountOptions(
        required("fsName", config.fsName()), Path.of(required("mountpoint", config.mountpoint())),
        config.singleThreaded(), config.attrTimeoutSeconds(), config.entryTimeoutSeconds(),
        Duration.ofMillis(config.mountTimeoutMs()), Duration.ofMillis(config.unmountTimeoutMs()));
    LibfuseProbe.check();
    EtcfsFuse fs = withBundleLoader(() -> new EtcfsFuse(vfs, config.directIo(), config.zeroCopy()));
    this.mount = FuseMount.mount(fs, options);
  }

  @Deactivate
  void deactivate() {
    mount.close();
  }

  /** jnr-ffi generates its callback classes through the context loader: make it this bundle's. */
  static <T> T withBundleLoader(Supplier<T> action) {
    return Components.withLoaderOf(FuseFrontend.class, action);
  }

  private static String required(String name, String value) {
    return Components.required(PID, name, value);
  }
}

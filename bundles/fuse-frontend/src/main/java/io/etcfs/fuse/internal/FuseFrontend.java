package io.etcfs.fuse.internal;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * The FUSE front end. At this stage it checks, at activation, that libfuse 2 can be loaded and
 * bound through jnr-fuse inside this bundle, and fails the activation with one line if not. It
 * mounts nothing: the mount, and mapping FUSE calls onto the core, are issue #3.
 */
@Component(
    service = {},
    immediate = true,
    configurationPid = FuseFrontend.PID,
    configurationPolicy = ConfigurationPolicy.REQUIRE)
@Designate(ocd = FuseFrontend.Config.class)
public final class FuseFrontend {
  static final String PID = "io.etcfs.fuse";
  private static final Logger LOG = System.getLogger(FuseFrontend.class.getName());

  @ObjectClassDefinition(
      name = "etcfs FUSE front end",
      description = "Mounts the filesystem through libfuse 2.")
  @interface Config {
    @AttributeDefinition(description = "The filesystem's name, shown as fuse.etcfs source.")
    String fsName();

    @AttributeDefinition(description = "The directory to mount on.")
    String mountpoint();
  }

  @Activate
  public FuseFrontend(Config config) {
    String fsName = required("fsName", config.fsName());
    String mountpoint = required("mountpoint", config.mountpoint());
    LibfuseProbe.check();
    LOG.log(Level.INFO,
        "libfuse 2 is usable; the FUSE mount of {0} at {1} is built in issue #3, nothing mounted",
        fsName, mountpoint);
  }

  private static String required(String name, String value) {
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException(PID + ": " + name + " is not set");
    }
    return value;
  }
}
